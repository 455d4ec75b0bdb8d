import type { WebhookEndpointDocument } from '../../db/models/webhook-endpoint';
import { EVENT_TYPES } from './event-types';
import type { components } from '../../schemas/api-types';

type EndpointView = components['schemas']['WebhookEndpoint'];
type EventTypeView = components['schemas']['WebhookEventType'];

/** Dates stay Date objects: the timezone middleware renders them in the caller's zone. */
type WithDates<T, K extends keyof T> = Omit<T, K> & { [P in K]: Date };

/** An endpoint as every answer shows it: the secret only as its hint. */
export function webhookEndpointView(endpoint: WebhookEndpointDocument): WithDates<EndpointView, 'created_at' | 'updated_at'> {
  return {
    id: endpoint._id,
    url: endpoint.url,
    description: endpoint.description,
    events: [...endpoint.events],
    active: endpoint.active,
    secret_hint: endpoint.secret_hint,
    created_at: endpoint.created_at,
    created_by: endpoint.created_by?.name ?? '',
    updated_at: endpoint.updated_at,
  };
}

/** The create and rotate answers: the endpoint and, this once, its whole secret (stored sealed, so given apart). */
export function endpointWithSecretView(endpoint: WebhookEndpointDocument, secret: string) {
  return { ...webhookEndpointView(endpoint), secret };
}

export function eventTypeViews(): EventTypeView[] {
  return EVENT_TYPES.map(({ type, description, data_fields }) => ({ type, description, data_fields: [...data_fields] }));
}

/**
 * How audit records name an endpoint: its URL without query or fragment, which may carry a
 * receiver's token; the audit log would keep it long after the URL changed.
 */
export function auditNameOf(url: string): string {
  return url.replace(/[?#].*$/, '');
}
