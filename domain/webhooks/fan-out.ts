import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { findByIdOwned } from '../../db/by-id';
import { isDuplicateKeyError } from '../../db/errors';
import { Agent } from '../../db/models/agent';
import { CallEvent } from '../../db/models/call-event';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { WebhookEndpoint } from '../../db/models/webhook-endpoint';
import { openSecret } from '../../contracts/secret-box';
import { ALL_EVENTS, type EventLevel } from './event-types';
import { deliveryIdFor, eventIdFor } from './ids';
import { webhookBody } from './payload';
import { reserveLocalFirstAttempt } from './first-attempts';
import { startDeliveryWorkflow } from './temporal';
import type { DeliveryTitle } from '../../contracts/webhooks';
import type { DataStorage } from '../../contracts/data-storage';
import { bodyKeptAfterDelivery, callDataStorage, storedEventText } from '../privacy/data-storage';
import type { RecordEventInput } from '../../contracts/webhooks';

export type { RecordEventInput } from '../../contracts/webhooks';

export interface RecordedEvent {
  eventId: string;
  deliveryIds: string[];
}

interface Target {
  key: string;
  kind: 'endpoint' | 'agent';
  endpointId: string | null;
  url: string;
  /** An endpoint's secret, for the first attempt's fast path (agents' URLs use the workspace's default secret, read at the attempt). */
  secret: string | null;
}

/**
 * Saves one call event on the timeline and sends it to every matching target: the
 * workspace's active endpoints subscribed to its type (or `*`), and the agent's `webhook_url`.
 * One delivery record and one delivery workflow per target, all carrying the same event id.
 *
 * Safe to retry: the event id comes from the call and the sequence, each delivery id from the
 * event and the target, and the timeline entry and the deliveries are inserted under those
 * ids, so a second run finds them and creates nothing twice. A delivery's workflow is started
 * when the record is new, or when it is still untouched (a run that died between the insert
 * and the start); the start is refused for an id whose workflow already ran.
 */
export async function recordEvent(input: RecordEventInput, { temporal, now }: { temporal: Client; now: () => Date }): Promise<RecordedEvent> {
  const eventId = eventIdFor(input.callId, input.sequence);
  const mode = input.dataStorage ?? (await callDataStorage(input.callId));
  const { event, inserted } = await saveEvent(eventId, input, mode);
  // The webhooks carry the event as it happened, whatever the call keeps (0213): a new entry's
  // own text, or the first run's entry as stored (a retry sends the same bytes as before).
  const sent = inserted
    ? { message: input.message, data: input.data ?? {} }
    : { message: event.message, data: JSON.parse(event.data_json) as Record<string, unknown> };
  const body = webhookBody({
    id: eventId,
    type: event.type,
    created_at: event.created_at,
    workspace_id: event.workspace_id,
    call_id: event.call_id,
    agent_id: event.agent_id,
    message: sent.message,
    level: event.level,
    latency_ms: event.latency_ms,
    data: sent.data,
  });
  const keptBody = bodyKeptAfterDelivery(mode, body);
  const targets = await targetsOf(event.workspace_id, event.agent_id, event.type, input.agentWebhookUrl);
  const deliveryIds = await Promise.all(
    targets.map(async (target) => {
      const deliveryId = deliveryIdFor(eventId, target.key);
      if (await createDelivery(deliveryId, target, eventId, event, body, keptBody, now())) {
        const local =
          target.secret !== null &&
          reserveLocalFirstAttempt({ deliveryId, eventType: event.type, requestBody: body, url: target.url, secret: target.secret, active: true });
        await startQuietly(temporal, deliveryId, event.workspace_id, { eventType: event.type, url: target.url, callId: event.call_id }, local);
      }
      return deliveryId;
    }),
  );
  return { eventId, deliveryIds };
}

type SavedEvent = {
  workspace_id: string;
  call_id: string;
  agent_id: string;
  type: string;
  message: string;
  level: EventLevel;
  latency_ms: number | null;
  data_json: string;
  created_at: Date;
};

/** The timeline entry (its text as the call's mode keeps it), inserted once; a retry reads back the first run's entry. */
async function saveEvent(eventId: string, input: RecordEventInput, mode: DataStorage): Promise<{ event: SavedEvent; inserted: boolean }> {
  const stored = storedEventText(mode, input.message, input.data ?? {});
  const entry = {
    _id: eventId,
    workspace_id: input.workspaceId,
    call_id: input.callId,
    agent_id: input.agentId,
    sequence: input.sequence,
    type: input.type,
    message: stored.message,
    level: input.level,
    latency_ms: input.latencyMs,
    data_json: JSON.stringify(stored.data),
    created_at: new Date(input.createdAt),
  };
  try {
    // Inserted as built (every field of the schema is set here): no document to hydrate and validate on the fan-out's path.
    await CallEvent.collection.insertOne(entry as unknown as Parameters<typeof CallEvent.collection.insertOne>[0]);
    return { event: entry, inserted: true };
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const saved = await CallEvent.findById(eventId).lean<SavedEvent>();
    if (!saved) throw error;
    return { event: saved, inserted: false };
  }
}

async function targetsOf(workspaceId: string, agentId: string, type: string, agentWebhookUrl: string | null | undefined): Promise<Target[]> {
  const [endpoints, agent] = await Promise.all([
    WebhookEndpoint.find({ workspace_id: workspaceId, active: true }, { url: 1, events: 1, secret: 1 }).lean(),
    !agentId
      ? null
      : agentWebhookUrl !== undefined
        ? { _id: agentId, webhook_url: agentWebhookUrl }
        : findByIdOwned<{ _id: string; webhook_url: string | null }>(Agent, agentId, { workspace_id: workspaceId }, { webhook_url: 1 }),
  ]);
  const targets: Target[] = endpoints
    .filter((endpoint) => endpoint.events.includes(ALL_EVENTS) || endpoint.events.includes(type))
    .map((endpoint) => ({
      key: `endpoint:${endpoint._id}`,
      kind: 'endpoint',
      endpointId: endpoint._id,
      url: endpoint.url,
      secret: openSecret(endpoint.secret),
    }));
  if (agent?.webhook_url) targets.push({ key: `agent:${agent._id}`, kind: 'agent', endpointId: null, url: agent.webhook_url, secret: null });
  return targets;
}

/** Inserts the delivery; true when its workflow is still to be started. */
async function createDelivery(
  deliveryId: string,
  target: Target,
  eventId: string,
  event: SavedEvent,
  body: string,
  keptBody: string | null,
  now: Date,
): Promise<boolean> {
  try {
    // Every field of the schema, defaults included, inserted as built (no document to hydrate and validate).
    const delivery = {
      _id: deliveryId,
      workspace_id: event.workspace_id,
      target: target.kind,
      endpoint_id: target.endpointId,
      agent_id: event.agent_id ?? '',
      url: target.url,
      event_id: eventId,
      event_type: event.type,
      call_id: event.call_id ?? '',
      request_body: body,
      body_after_delivery: keptBody,
      status: 'pending',
      retries: true,
      attempt_count: 0,
      next_attempt_at: null,
      last_response: null,
      failure_reason: null,
      target_deleted_at: null,
      created_at: now,
      updated_at: now,
      delivered_at: null,
    };
    await WebhookDelivery.collection.insertOne(delivery as unknown as Parameters<typeof WebhookDelivery.collection.insertOne>[0]);
    return true;
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const existing = await WebhookDelivery.findById(deliveryId, { status: 1, attempt_count: 1 }).lean();
    return existing?.status === 'pending' && existing.attempt_count === 0;
  }
}

async function startQuietly(temporal: Client, deliveryId: string, workspaceId: string, title: DeliveryTitle, localFirstAttempt: boolean): Promise<void> {
  try {
    await startDeliveryWorkflow(temporal, { deliveryId, workspaceId, mode: 'scheduled', reuse: 'never', title, localFirstAttempt });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
