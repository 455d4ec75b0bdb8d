import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { DataStorage } from './data-storage';

/**
 * Messages of the webhook delivery workflow (`whd_<id>`) and the redelivery workflow, shared by
 * the API, the fan-out activity and the workflows. Importing this pulls in no workflow code.
 */

/** Delays before the automatic attempts 2 to 6 (contract: 10 s, 1 min, 5 min, 30 min, 2 h). */
export const RETRY_DELAYS_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000] as const;
/** The sixth failed automatic attempt makes a delivery failed. */
export const AUTOMATIC_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';
export type AttemptTrigger = 'automatic' | 'manual' | 'test';

export interface DeliveryWorkflowInput {
  deliveryId: string;
  /**
   * `scheduled`: the automatic schedule (first attempt at once, then the retry delays).
   * `once`: a single attempt (a ping, or a manual retry of a delivery whose schedule has ended).
   */
  mode: 'scheduled' | 'once';
  /** The trigger of the single attempt in `once` mode. */
  trigger?: Exclude<AttemptTrigger, 'automatic'>;
  /** Attempts made by earlier runs (a manual retry after the schedule ended continues the count). */
  attemptsBefore?: number;
  /**
   * `local`: the first automatic attempt is a local activity (the fan-out's fast path, for a
   * target that answers fast; domain/webhooks/first-attempts.ts). Absent: an ordinary activity.
   */
  firstAttempt?: 'local';
}

/** What a delivery carries where, for its one-line summary in the Temporal UI. */
export interface DeliveryTitle {
  eventType: string;
  url: string;
  /** The call the event is about, when it is a call's. */
  callId?: string | null;
}

/**
 * `call.ended of call 5f2c... to https://hooks.example.com/voice` (`manual retry of ...`,
 * `test ping to ...`): what the delivery workflow's summary says. A run started without the
 * title (an activity result recorded before it existed) is named by its id.
 */
export function deliverySummary(
  deliveryId: string,
  mode: DeliveryWorkflowInput['mode'],
  trigger: DeliveryWorkflowInput['trigger'],
  title: DeliveryTitle | null,
): string {
  const what = title ? `${title.eventType}${title.callId ? ` of call ${title.callId}` : ''} to ${title.url}` : `delivery ${deliveryId}`;
  if (mode === 'scheduled') return what;
  return trigger === 'test' ? `test ${what}` : `manual retry of ${what}`;
}

/** The ids behind a delivery workflow, for its details in the Temporal UI. */
export function deliveryDetails(deliveryId: string, workspaceId: string): string {
  return `Delivery \`${deliveryId}\` of workspace \`${workspaceId}\`: its attempts with \`GET /api/v1/webhooks/deliveries/${deliveryId}\`; update \`retryNow\` makes one more.`;
}

/** What one attempt did, as the Temporal history and the manual retry's answer show it. */
export interface AttemptResult {
  attemptId: string;
  trigger: AttemptTrigger;
  /** ISO time the request was signed and sent. */
  at: string;
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string;
  /** The delivery's status after this attempt. */
  status: DeliveryStatus;
  /** The endpoint (or the agent's URL) is gone: nothing was sent, and nothing will be. */
  targetGone: boolean;
}

export interface DeliveryState {
  deliveryId: string;
  status: DeliveryStatus;
  automaticAttempts: number;
  attempts: number;
  /** ISO, workflow time, while an automatic retry waits. */
  nextAttemptAt: string | null;
  last: AttemptResult | null;
}

/** One extra attempt now; answers its result. Never restarts the automatic schedule. */
export const retryNowUpdate = defineUpdate<AttemptResult>('retryNow');
export const deliveryStateQuery = defineQuery<DeliveryState>('state');

export interface RedeliveryInput {
  redeliveryId: string;
  workspaceId: string;
  endpointId: string;
  /** ISO: failed deliveries created at or after this time are retried. */
  since: string;
  /** Carried over continue-as-new. */
  progress?: RedeliveryProgress;
  total?: number | null;
}

export interface RedeliveryProgress {
  /** The last delivery id handled (deliveries are taken in id order). */
  cursor: string | null;
  attempted: number;
  delivered: number;
  failed: number;
  /** Deliveries already being retried by someone else when their turn came. */
  skipped: number;
}

export const redeliveryProgressQuery = defineQuery<RedeliveryProgress & { total: number | null; status: string }>('progress');

/** The delivery workflow's signature, for typed clients that import no workflow code (workflows/webhook-delivery.ts implements it). */
export type WebhookDeliveryWorkflow = (input: DeliveryWorkflowInput) => Promise<DeliveryState>;

/** The redelivery workflow's signature, for typed clients that import no workflow code (workflows/webhook-redelivery.ts implements it). */
export type WebhookRedeliveryWorkflow = (input: RedeliveryInput) => Promise<RedeliveryProgress & { total: number | null; status: string }>;

/** A timeline entry's level, as `call.*` events and the call's timeline carry it. */
export type EventLevel = 'info' | 'warning' | 'error';

export interface RecordEventInput {
  workspaceId: string;
  callId: string;
  agentId: string;
  /** The entry's place on the call's timeline (0, 1, 2, ...); with the call id it names the event. */
  sequence: number;
  type: string;
  message: string;
  level: EventLevel;
  latencyMs: number | null;
  data?: Record<string, unknown>;
  /** ISO; when it happened. */
  createdAt: string;
  /**
   * The agent's `webhook_url` as the caller read it with the agent (null: it has none). A call
   * sends its events to the agent's URL as the call read the agent, like every other setting
   * of the agent (decision 0155); given here, the fan-out does not read the agent again for
   * every event. Absent: the fan-out reads it.
   */
  agentWebhookUrl?: string | null;
  /** The call's `data_storage` (docs/decisions/0213), when the caller has it; absent: read from the call record. */
  dataStorage?: DataStorage;
}

export interface FailedDelivery {
  id: string;
  attemptCount: number;
  /** For the retry's summary in the Temporal UI (absent from results recorded before it was added). */
  title?: DeliveryTitle;
}
