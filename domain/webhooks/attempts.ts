import { ApplicationFailure } from '@temporalio/common';
import { keepBodyAfterDelivery } from './kept-bodies';
import type { GuardOptions } from '../../providers/net/guarded-request';
import type { AttemptResult, AttemptTrigger, DeliveryStatus } from '../../contracts/webhooks';
import { findByIdOwned } from '../../db/by-id';
import { isDuplicateKeyError } from '../../db/errors';
import { Agent } from '../../db/models/agent';
import { WebhookAttempt } from '../../db/models/webhook-attempt';
import { WebhookDelivery, type WebhookDeliveryDocument } from '../../db/models/webhook-delivery';
import { WebhookEndpoint } from '../../db/models/webhook-endpoint';
import { openSecret } from '../../contracts/secret-box';
import { ENDPOINT_DELETED } from './endpoints';
import { recordTargetAnswer, takeRemembered } from './first-attempts';
import { defaultSecretOf } from './secrets';
import { postWebhook } from './send';
import { observeWebhookAttempt } from '../shared/metrics';

export interface AttemptInput {
  deliveryId: string;
  /** Fixed by the workflow: a retried activity records the same attempt again, not a second one. */
  attemptId: string;
  trigger: AttemptTrigger;
  /** Attempts of the delivery once this one is made (every run and trigger). */
  attemptCount: number;
  /**
   * The status a failure leaves: `retrying` with the next automatic attempt in `retryInMs`
   * (null: keep the one already scheduled, for a manual attempt between automatic ones), or
   * `failed` when no automatic attempt remains.
   */
  ifFailed: { status: 'retrying'; retryInMs: number | null } | { status: 'failed' };
}

export interface AttemptDeps {
  now: () => Date;
  guard: GuardOptions;
  /** The target's answer time limit (contract: 10 s; a deployment may not raise it). */
  timeoutMs?: number;
  /** How long after its start a run may still write its outcome (see WRITE_DEADLINE_MS). */
  writeDeadlineMs?: number;
}

/**
 * A run of the attempt activity writes its outcome only within 25 s of its start. Temporal
 * times the activity out at 40 s and runs it again under the same attempt id; without this
 * deadline, a run stalled past its timeout (a database stall) could finish after the retry
 * and overwrite the retry's outcome. The 15 s margin covers one slow write (SQLite waits up
 * to 10 s for its lock).
 */
export const WRITE_DEADLINE_MS = 25_000;

interface Target {
  url: string;
  secret: string;
  /** Agents' URLs are always active; an endpoint may be switched off. */
  active: boolean;
}

type TargetLookup = { target: Target; gone: null } | { target: null; gone: string };

/**
 * One attempt of a delivery: reads the target's current URL and secret (so a rotation or an
 * edit applies to retries already waiting), signs and posts the stored body, keeps the attempt,
 * and moves the delivery to the status the outcome justifies. An inactive endpoint receives
 * nothing: the attempt is recorded as failed without a request. A target that no longer exists
 * fails the delivery for good (`targetGone`).
 */
export async function attemptDelivery(input: AttemptInput, deps: AttemptDeps): Promise<AttemptResult> {
  const started = performance.now();
  const assertInTime = () => {
    if (performance.now() - started > (deps.writeDeadlineMs ?? WRITE_DEADLINE_MS)) {
      throw new Error(`attempt ${input.attemptId} ran past its write deadline; the activity's retry records it instead`);
    }
  };
  // The first automatic attempt right after the fan-out, in its process, uses what the fan-out
  // just read and wrote (first-attempts.ts); any other attempt reads the delivery and its target.
  const fresh = input.trigger === 'automatic' && input.attemptCount === 1 ? takeRemembered(input.deliveryId) : null;
  const stored = fresh ? null : await WebhookDelivery.findById(input.deliveryId).lean<WebhookDeliveryDocument>();
  if (!fresh && !stored) throw ApplicationFailure.nonRetryable(`webhook delivery ${input.deliveryId} does not exist`, 'DeliveryMissing');
  const delivery = fresh
    ? { _id: fresh.deliveryId, request_body: fresh.requestBody, event_type: fresh.eventType }
    : { _id: stored!._id, request_body: stored!.request_body, event_type: stored!.event_type };

  const lookup: TargetLookup = fresh
    ? { target: { url: fresh.url, secret: fresh.secret, active: fresh.active }, gone: null }
    : await targetOf(stored!, deps.now());
  if (lookup.gone !== null) {
    const at = deps.now();
    await failDelivery(delivery._id, lookup.gone, at);
    return {
      attemptId: input.attemptId,
      trigger: input.trigger,
      at: at.toISOString(),
      ok: false,
      status_code: null,
      latency_ms: 0,
      error: lookup.gone,
      response_excerpt: '',
      status: 'failed',
      targetGone: true,
    };
  }

  const at = deps.now();
  const inactive = !lookup.target.active && input.trigger !== 'test';
  const response = inactive
    ? { ok: false, status_code: null, latency_ms: 0, error: 'the endpoint is inactive: nothing was sent', response_excerpt: '', signed_at: null }
    : await postWebhook(
        {
          url: lookup.target.url,
          rawBody: delivery.request_body,
          eventType: delivery.event_type,
          deliveryId: delivery._id,
          secret: lookup.target.secret,
          now: at,
          timeoutMs: deps.timeoutMs,
        },
        deps.guard,
      );
  const finishedAt = new Date(at.getTime() + response.latency_ms);
  if (!inactive) recordTargetAnswer(delivery._id, lookup.target.url, { latencyMs: response.latency_ms, answered: response.status_code !== null });

  assertInTime();
  await keepAttempt({
    _id: input.attemptId,
    delivery_id: delivery._id,
    trigger: input.trigger,
    at,
    status_code: response.status_code,
    latency_ms: response.latency_ms,
    error: response.error,
    response_excerpt: response.response_excerpt,
    signed_at: response.signed_at,
  });

  const status: DeliveryStatus = response.ok ? 'delivered' : input.ifFailed.status;
  const set: Record<string, unknown> = {
    status,
    url: lookup.target.url,
    attempt_count: input.attemptCount,
    last_response: { at, status_code: response.status_code, latency_ms: response.latency_ms, error: response.error, body_excerpt: response.response_excerpt },
    updated_at: finishedAt,
  };
  if (response.ok) Object.assign(set, { delivered_at: finishedAt, next_attempt_at: null, failure_reason: null });
  else if (input.ifFailed.status === 'failed') Object.assign(set, { next_attempt_at: null, failure_reason: response.error });
  else if (input.ifFailed.retryInMs !== null) set.next_attempt_at = new Date(finishedAt.getTime() + input.ifFailed.retryInMs);
  assertInTime();
  const targetGone = !(await writeUnlessTargetDeleted(delivery._id, set, finishedAt));
  const finalStatus = targetGone ? 'failed' : status;
  // Lag from the delivery's creation; a first attempt made from what the fan-out just wrote counts from its own start (a few ms later).
  const createdAt = stored ? stored.created_at : at;
  observeWebhookAttempt({
    trigger: input.trigger,
    outcome: finalStatus,
    lagMs: finalStatus === 'delivered' ? finishedAt.getTime() - createdAt.getTime() : null,
  });

  return {
    attemptId: input.attemptId,
    trigger: input.trigger,
    at: at.toISOString(),
    ok: response.ok,
    status_code: response.status_code,
    latency_ms: response.latency_ms,
    error: response.error,
    response_excerpt: response.response_excerpt,
    status: finalStatus,
    targetGone,
  };
}

/**
 * Keeps the attempt under its id: an insert (one write; on FerretDB an upsert is a read and a
 * write), or, when a retried run of the same attempt already kept it, a replacement.
 */
async function keepAttempt(attempt: {
  _id: string;
  delivery_id: string;
  trigger: AttemptTrigger;
  at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string;
  signed_at: number | null;
}): Promise<void> {
  try {
    await WebhookAttempt.collection.insertOne(attempt as unknown as Parameters<typeof WebhookAttempt.collection.insertOne>[0]);
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const { _id, ...fields } = attempt;
    await WebhookAttempt.replaceOne({ _id }, fields);
  }
}

/**
 * Writes the attempt's outcome; false when the target was deleted meanwhile, in which case the
 * delivery is left failed: deleting the endpoint wins over an attempt that was in flight.
 * The write is by `_id` alone (a guarded filter would make FerretDB scan every delivery) and
 * answers the document as written, so the deletion mark is checked in the same round trip.
 * Endpoint deletion marks `target_deleted_at` before it fails the open deliveries, so either
 * that pass sees this write or this write sees the mark.
 */
async function writeUnlessTargetDeleted(deliveryId: string, set: Record<string, unknown>, at: Date): Promise<boolean> {
  // (FerretDB implements no projection in findAndModify: the whole document comes back.)
  const after = await WebhookDelivery.findOneAndUpdate({ _id: deliveryId }, { $set: set }, { returnDocument: 'after' }).lean();
  if (!after?.target_deleted_at) {
    if (after && (after.status === 'delivered' || after.status === 'failed')) await keepBodyAfterDelivery(after);
    return true;
  }
  await WebhookDelivery.updateOne({ _id: deliveryId }, { $set: { status: 'failed', failure_reason: ENDPOINT_DELETED, next_attempt_at: null, updated_at: at } });
  await keepBodyAfterDelivery(after);
  return false;
}

/** Fails a delivery whose target is gone or whose workflow was stopped; keeps a delivered one. */
export async function failDelivery(deliveryId: string, reason: string, at: Date): Promise<void> {
  // Read, then write by `_id` alone: FerretDB uses its primary key only for an exact `{_id}`.
  const current = await WebhookDelivery.findById(deliveryId, { status: 1, body_after_delivery: 1 }).lean();
  if (current?.status !== 'pending' && current?.status !== 'retrying') return;
  await WebhookDelivery.updateOne({ _id: deliveryId }, { $set: { status: 'failed', failure_reason: reason, next_attempt_at: null, updated_at: at } });
  await keepBodyAfterDelivery(current);
}

async function targetOf(delivery: WebhookDeliveryDocument, now: Date): Promise<TargetLookup> {
  if (delivery.target_deleted_at) return { target: null, gone: ENDPOINT_DELETED };
  if (delivery.target === 'endpoint') {
    const endpoint = await WebhookEndpoint.findById(delivery.endpoint_id, { url: 1, secret: 1, active: 1 }).lean();
    return endpoint
      ? { target: { url: endpoint.url, secret: openSecret(endpoint.secret), active: endpoint.active }, gone: null }
      : { target: null, gone: ENDPOINT_DELETED };
  }
  const agent = await findByIdOwned<{ webhook_url: string | null }>(Agent, delivery.agent_id, { workspace_id: delivery.workspace_id }, { webhook_url: 1 });
  if (!agent) return { target: null, gone: 'agent deleted' };
  if (!agent.webhook_url) return { target: null, gone: "the agent's webhook_url was removed" };
  const { secret } = await defaultSecretOf(delivery.workspace_id, now);
  return { target: { url: agent.webhook_url, secret, active: true }, gone: null };
}
