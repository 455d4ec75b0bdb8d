import {
  allHandlersFinished,
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import {
  AUTOMATIC_ATTEMPTS,
  deliveryStateQuery,
  RETRY_DELAYS_MS,
  retryNowUpdate,
  type AttemptResult,
  type AttemptTrigger,
  type DeliveryState,
  type DeliveryWorkflowInput,
} from '../contracts/webhooks';
import { WEBHOOK_RETRY_QUEUE } from '../contracts/task-queues';

type Activities = ReturnType<typeof createActivities>;

const ATTEMPT_OPTIONS = {
  // The target has 10 s; the rest is MongoDB. The activity never fails for what the target
  // does, so a retry means MongoDB or the worker failed: retry until they are back.
  startToCloseTimeout: '40 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
} as const;
/** First attempts and manual retries, on the workflow's own queue. */
const { attemptWebhookDelivery } = proxyActivities<Activities>(ATTEMPT_OPTIONS);
/** Automatic retries, on their own queue with bounded slots (see WEBHOOK_RETRY_QUEUE). */
const { attemptWebhookDelivery: retryWebhookDelivery } = proxyActivities<Activities>({ ...ATTEMPT_OPTIONS, taskQueue: WEBHOOK_RETRY_QUEUE });
/**
 * The first automatic attempt when the fan-out chose the fast path: in the workflow task that
 * starts the workflow, on the worker that started it eagerly, with no activity task of its own.
 * The same limits as an activity; Temporal retries it locally, then with timers.
 */
const { attemptWebhookDelivery: attemptLocally } = proxyLocalActivities<Activities>(ATTEMPT_OPTIONS);
const { failWebhookDelivery } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * One event to one target (`whd_<id>`). In `scheduled` mode: the first attempt at once, then,
 * after each failure, a durable timer of 10 s, 1 min, 5 min, 30 min and 2 h before the next;
 * a 2xx makes it delivered and the sixth failed attempt makes it failed. In `once` mode: one
 * attempt (a ping, or a manual retry after the schedule ended), never retried.
 *
 * The `retryNow` update makes one extra attempt at any time without touching the schedule; a
 * success ends it as delivered. Attempts never overlap: each waits for the one in flight.
 * Canceling the workflow (the endpoint was deleted) fails the delivery and stops.
 */
export async function webhookDeliveryWorkflow(input: DeliveryWorkflowInput): Promise<DeliveryState> {
  const state: DeliveryState = { deliveryId: input.deliveryId, status: 'pending', automaticAttempts: 0, attempts: 0, nextAttemptAt: null, last: null };
  let attempting = false;
  let finished = false; // delivered, or the target is gone
  let scheduleRunning = input.mode === 'scheduled';

  /** Makes one attempt once no other is in flight. */
  async function attempt(trigger: AttemptTrigger, ifFailed: Parameters<Activities['attemptWebhookDelivery']>[0]['ifFailed']): Promise<AttemptResult> {
    // (Awaited only when needed: every promise in workflow code costs a stack capture.)
    if (attempting) await condition(() => !attempting);
    attempting = true;
    try {
      state.attempts += 1;
      const attemptId = `${input.deliveryId}:${workflowInfo().runId}:${state.attempts}`;
      setCurrentDetails(`attempt ${state.attempts} (${trigger}) in flight`);
      const attemptCount = (input.attemptsBefore ?? 0) + state.attempts;
      const send =
        trigger !== 'automatic'
          ? attemptWebhookDelivery
          : state.automaticAttempts > 1
            ? retryWebhookDelivery
            : input.firstAttempt === 'local'
              ? attemptLocally
              : attemptWebhookDelivery;
      const result = await send({ deliveryId: input.deliveryId, attemptId, attemptCount, trigger, ifFailed });
      state.last = result;
      state.status = result.status;
      if (result.ok || result.targetGone) finished = true;
      return result;
    } finally {
      attempting = false;
    }
  }

  setHandler(deliveryStateQuery, () => state);
  setHandler(retryNowUpdate, () => attempt('manual', scheduleRunning && !finished ? { status: 'retrying', retryInMs: null } : { status: 'failed' }));

  try {
    if (input.mode === 'once') {
      await attempt(input.trigger ?? 'manual', { status: 'failed' });
    } else {
      await runSchedule();
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(() => failWebhookDelivery({ deliveryId: input.deliveryId, reason: 'delivery stopped' }));
    state.status = 'failed';
    setCurrentDetails('stopped: failed');
    return state;
  }
  // A manual attempt that arrived while the last one ran still gets its answer.
  if (!allHandlersFinished()) await condition(allHandlersFinished);
  setCurrentDetails(`${state.status} after ${state.attempts} attempt(s)`);
  return state;

  async function runSchedule(): Promise<void> {
    for (let n = 1; n <= AUTOMATIC_ATTEMPTS && !finished; n++) {
      if (n > 1) {
        const delay = RETRY_DELAYS_MS[n - 2];
        state.nextAttemptAt = new Date(Date.now() + delay).toISOString();
        setCurrentDetails(`retrying: automatic attempt ${n} of ${AUTOMATIC_ATTEMPTS} at ${state.nextAttemptAt}`);
        // A manual retry that succeeds meanwhile ends the wait, and the schedule.
        if (await condition(() => finished, delay)) break;
        state.nextAttemptAt = null;
      }
      state.automaticAttempts = n;
      const last = n === AUTOMATIC_ATTEMPTS;
      const result = await attempt('automatic', last ? { status: 'failed' } : { status: 'retrying', retryInMs: RETRY_DELAYS_MS[n - 1] });
      if (!result.ok && !result.targetGone)
        log.info('webhook attempt failed', { deliveryId: input.deliveryId, attempt: n, status: result.status_code, error: result.error });
    }
    state.nextAttemptAt = null;
    scheduleRunning = false;
  }
}
