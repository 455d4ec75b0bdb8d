import { WebhookAttempt } from '../../db/models/webhook-attempt';
import type { WebhookDeliveryDocument } from '../../db/models/webhook-delivery';
import type { WebhookRedeliveryDocument } from '../../db/models/webhook-redelivery';
import type { components } from '../../schemas/api-types';

type DeliveryView = components['schemas']['WebhookDelivery'];
type DeliveryDetailView = components['schemas']['WebhookDeliveryDetail'];
type RedeliveryView = components['schemas']['WebhookRedelivery'];

/** Fields a list shows: no body, no attempts (dates stay Date; the API renders them in the caller's zone). */
export const DELIVERY_LIST_FIELDS = { request_body: 0 } as const;

export function deliveryView(d: Omit<WebhookDeliveryDocument, 'request_body'>) {
  return {
    id: d._id,
    target: d.target,
    endpoint_id: d.endpoint_id ?? null,
    agent_id: d.agent_id ?? '',
    url: d.url,
    event_id: d.event_id,
    event_type: d.event_type,
    call_id: d.call_id ?? '',
    status: d.status,
    attempt_count: d.attempt_count ?? 0,
    next_attempt_at: d.next_attempt_at ?? null,
    last_status_code: d.last_response?.status_code ?? null,
    failure_reason: d.failure_reason ?? null,
    created_at: d.created_at,
    updated_at: d.updated_at,
    delivered_at: d.delivered_at ?? null,
  } satisfies Record<keyof DeliveryView, unknown>;
}

/** One delivery with the body it sends, the target's last answer and every attempt, oldest first. */
export async function deliveryDetailView(d: WebhookDeliveryDocument) {
  const attempts = await WebhookAttempt.find({ delivery_id: d._id }).sort({ at: 1, _id: 1 }).lean();
  const last = d.last_response;
  return {
    ...deliveryView(d),
    request_body: JSON.parse(d.request_body) as Record<string, unknown>,
    last_response: last?.at
      ? {
          at: last.at,
          status_code: last.status_code ?? null,
          latency_ms: last.latency_ms ?? 0,
          error: last.error ?? null,
          body_excerpt: last.body_excerpt ?? '',
        }
      : null,
    attempts: attempts.map((a) => ({
      at: a.at,
      trigger: a.trigger,
      status_code: a.status_code ?? null,
      latency_ms: a.latency_ms,
      error: a.error ?? null,
      response_excerpt: a.response_excerpt ?? '',
    })),
  } satisfies Record<keyof DeliveryDetailView, unknown>;
}

export function redeliveryView(r: WebhookRedeliveryDocument) {
  return {
    id: r._id,
    endpoint_id: r.endpoint_id,
    since: r.since,
    status: r.status,
    total: r.total ?? null,
    attempted: r.attempted ?? 0,
    delivered: r.delivered ?? 0,
    failed: r.failed ?? 0,
    skipped: r.skipped ?? 0,
    created_by: r.created_by?.name ?? '',
    created_at: r.created_at,
    finished_at: r.finished_at ?? null,
  } satisfies Record<keyof RedeliveryView, unknown>;
}
