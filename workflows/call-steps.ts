import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  TimeoutFailure,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { ConversationActivities, ConversationInput, ConversationOutcome, ConversationProgress } from '../contracts/conversation';
import { TASK_QUEUES } from '../contracts/task-queues';
import type { DialRequest, MediaNodeChoice } from '../contracts/calls';
import type { createActivities } from '../activities';

/**
 * What the call workflow (workflows/call.ts, workflows/call-lifecycle.ts) runs outside itself:
 * its activities with their timeouts and retries, the conversation on a media node, and the
 * limits it keeps. Workflow code: import it only from workflows.
 */

export type Activities = ReturnType<typeof createActivities> & ConversationActivities;
export type EventLevel = 'info' | 'warning' | 'error';

// The call's store steps (record writes, timeline events, the charge, the agent's read, the
// slot keeper's signals): short, idempotent, retried until they are back (a call's state must
// not be lost).
const STORE_STEP_OPTIONS = { startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', maximumInterval: '30 seconds' } } as const;
const { recordCallStep, queueCall, prepareDial, beginLiveCall, closeCall, loadCallAgent, enqueueCall, releaseSlot } =
  proxyLocalActivities<Activities>(STORE_STEP_OPTIONS);
const storeStepsAsLocalActivities: StoreSteps = { recordCallStep, queueCall, prepareDial, beginLiveCall, closeCall, loadCallAgent, enqueueCall, releaseSlot };
/** The same steps as regular activities, for calls whose histories began before the patch. */
const storeStepsAsActivities: StoreSteps = proxyActivities<Activities>(STORE_STEP_OPTIONS);

/**
 * Calls started since this patch run their store steps as local activities: in the calls
 * worker, inside the workflow task that needs them, with no activity task through the server
 * and no extra workflow task to take each result (docs/decisions/0150, "A call's store steps run as local
 * activities"). A call whose history began before keeps scheduling activities, so that it replays.
 */
export const LOCAL_STORE_STEPS_PATCH = 'call-store-steps-local';

type StoreSteps = Pick<
  Activities,
  'recordCallStep' | 'queueCall' | 'prepareDial' | 'beginLiveCall' | 'closeCall' | 'loadCallAgent' | 'enqueueCall' | 'releaseSlot'
>;

export function storeSteps(): StoreSteps {
  return patched(LOCAL_STORE_STEPS_PATCH) ? storeStepsAsLocalActivities : storeStepsAsActivities;
}
// Creating a call at the provider is not idempotent (a timed-out request may have placed it):
// one attempt, and any failure ends the call as a refused dial.
const DIAL_OPTIONS = { startToCloseTimeout: '20 seconds', retry: { maximumAttempts: 1 } } as const;
const { dialCall } = proxyActivities<Activities>(DIAL_OPTIONS);
const { dialCallOnce } = proxyLocalActivities<Activities>(DIAL_OPTIONS);

/**
 * Calls started since this patch dial in a local activity, which claims the dial on the call
 * record first so that a workflow task run again cannot dial twice (docs/decisions/0162): one
 * workflow task and one activity task fewer per call, and the slot's handoff one round trip
 * shorter. A call whose history began before keeps its `dialCall` activity.
 */
export const LOCAL_DIAL_PATCH = 'call-dial-local';

/**
 * Calls started since this patch give their slot back only after the step that ends their record
 * (`call.ended`), so that the calls stored as live never outnumber the workspace's limit: a
 * `ringing` or `in-progress` record always holds a slot (docs/decisions/0164). A call whose
 * history began before gave it back first (at the provider's final status), and still does on replay.
 */
export const RELEASE_AFTER_END_PATCH = 'call-release-after-end';

/**
 * Calls started since this patch wait for their dial's moment at the telephony account's pace
 * (docs/decisions/0166), which `prepareDial` takes; histories from before dial at once.
 */
export const DIAL_PACE_PATCH = 'call-dial-paced';

export function pacesDials(): boolean {
  return patched(DIAL_PACE_PATCH);
}

export function releasesAfterEnd(): boolean {
  return patched(RELEASE_AFTER_END_PATCH);
}

/** A new dial always names its agent (0244): the activities also take dials of histories from before, without it. */
export type DialInput = DialRequest & { agentId: string };

/** Dials the call: its provider call id, and when the provider accepted it (null on the activity path: the task's clock). */
export async function placeDial(input: DialInput): Promise<{ providerCallId: string; placedAt: string | null }> {
  if (patched(LOCAL_DIAL_PATCH)) {
    // At the account's pace (0166) the dial may be told to come back a moment later; a dial run
    // again after a lost workflow task, once the first run's outcome is known (0239).
    let earlierDialPending = false;
    for (;;) {
      const placed: Awaited<ReturnType<Activities['dialCallOnce']>> = await dialCallOnce({ ...input, earlierDialPending });
      if (!('retryAt' in placed)) return placed;
      earlierDialPending = placed.earlierDialPending === true;
      await sleep(Math.max(1, Date.parse(placed.retryAt) - Date.now()));
    }
  }
  const { callId, from, to, timeLimitSeconds } = input;
  return { ...(await dialCall({ callId, from, to, timeLimitSeconds })), placedAt: null };
}
// Hanging up is idempotent at the provider: retried until it answers.
export const { hangupProviderCall } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

// A transfer (docs/decisions/0160) is a re-point of the call at new XML: repeating it is harmless, retried a few times.
export const { transferProviderCall, joinTransferLegs, hangupTransferLeg } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});
// A second call for a warm transfer: creating a call is not idempotent, one attempt (as dialCall).
export const { dialTransferLeg } = proxyActivities<Activities>({ startToCloseTimeout: '20 seconds', retry: { maximumAttempts: 1 } });

/** Provider statuses that end a call. */
export const FINAL_PROVIDER_STATUSES = new Set(['completed', 'no-answer', 'busy', 'failed', 'canceled']);
/**
 * The provider's own time limit is a backstop after ours (the conversation's cap, then the
 * workflow's cap + grace): our limits end the call first, with their reason.
 */
export const PROVIDER_LIMIT_MARGIN_SECONDS = 20;
/** How long past its cap a call may run before the workflow ends it itself (the provider's own time limit comes first). */
export const CAP_GRACE_MS = 15_000;
/** How long a live hang-up waits for the provider's final status before answering. */
export const HANGUP_ANSWER_WAIT_MS = 10_000;

/** After the provider's final status (the conversation is canceled then), how long it may take to stop before the call ends without it. */
export const CONVERSATION_STOP_WAIT_MS = 10_000;
/**
 * Calls started since this patch give a conversation that has not ended, when the provider's
 * final status comes, CONVERSATION_CLAIM_GRACE_MS to end on its own before canceling it. The
 * conversation starts when the stream reaches the node (0165) and may end (and close its
 * stream, which ends the call at the provider) before its activity has claimed it; a cancel
 * then stopped the activity before it ever ran, and the conversation's events (an error among
 * them) and its outcome were never saved (docs/decisions/0232).
 */
export const CLAIM_BEFORE_STOP_PATCH = 'conversation-claimed-before-stop';
/** Longer than a chosen node's queue may take to start the activity (CHOSEN_NODE_START_TIMEOUT_MS): it fails then, and is done. */
export const CONVERSATION_CLAIM_GRACE_MS = 12_000;
/** The provider connects a call's stream within a second or two of the answer. */
export const PHONE_STREAM_WAIT_SECONDS = 15;
/** A browser page has its stream token's life (60 s) to connect. */
export const BROWSER_STREAM_WAIT_SECONDS = 65;

/**
 * Starts the conversation activity in its own cancellation scope; `conversation.done` turns
 * true when it ends, with its outcome, or the failure and the time of its last heartbeat.
 */
export interface ConversationRun {
  scope: CancellationScope | null;
  done: boolean;
  /** We canceled it (the call was over, or past its cap): a failure then is no error. */
  canceled: boolean;
  outcome: ConversationOutcome | null;
  failure: string | null;
  /** It stopped heartbeating (its media node died or hung). */
  timedOut: boolean;
  /** Epoch ms of its last heartbeat, when it timed out. */
  lastBeatAt: number | null;
  /** Epoch ms its stream arrived (the agent went live), as its last heartbeat said; null if never. */
  liveSince: number | null;
  /** Epoch ms it was started a second time, its first task never run by its node (0241); null if not. */
  startedAgainAt: number | null;
}

/**
 * Calls started since this patch run a phone call's conversation on the media node the API's
 * answer sent its audio to, on that node's own task queue (docs/decisions/0165), instead of on
 * the shared `media` queue with the answer waiting for whichever node picked it up.
 */
export const CONVERSATION_ON_ANSWERING_NODE_PATCH = 'conversation-on-answering-node';

/** A conversation on a chosen node's own queue not taken this long after it was scheduled: the node is gone, the call ends with an error. */
export const CHOSEN_NODE_START_TIMEOUT_MS = 10_000;

/** The node `begin` runs the conversation on: the chosen one (since the patch), or null for the shared queue. */
export function conversationNode(chosen: MediaNodeChoice | null): MediaNodeChoice | null {
  return chosen && patched(CONVERSATION_ON_ANSWERING_NODE_PATCH) ? chosen : null;
}

export function startConversation(conversation: ConversationRun, input: ConversationInput, node: MediaNodeChoice | null = null): void {
  const runConversation = conversationActivity(input, node);
  const scope = new CancellationScope();
  conversation.scope = scope;
  const scheduledAt = Date.now();
  scope
    .run(async () => {
      try {
        return await runConversation(input);
      } catch (error) {
        const timeout = timeoutOfNeverRun(error);
        if (!node || !timeout || conversation.canceled || !patched(CONVERSATION_STARTED_AGAIN_PATCH)) throw error;
        // Its node never ran it: the task was not taken in time, or taken and lost on its way to
        // the node's code, not one beat sent (docs/decisions/0241). A node that still beats in the
        // directory is starved, not gone: a second start there claims the call's conversation
        // where its stream left it. A node gone ends the call as before.
        if (!(await mediaNodeAlive({ taskQueue: node.taskQueue }))) throw error;
        log.warn('the conversation activity never ran on its node, which is alive: it is started again there', { callId: input.callId, timeout });
        conversation.startedAgainAt = Date.now();
        const waitedSeconds = Math.floor((Date.now() - scheduledAt) / 1000);
        // The stream's wait counts from the answer, not from the second start.
        const streamWaitSeconds = Math.max(MIN_STREAM_WAIT_AGAIN_SECONDS, input.streamWaitSeconds - waitedSeconds);
        return await runConversation({ ...input, streamWaitSeconds });
      }
    })
    .then((outcome) => {
      conversation.outcome = outcome;
    })
    .catch((error: unknown) => {
      conversation.failure =
        error instanceof Error ? (error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message) : String(error);
      if (error instanceof ActivityFailure && error.cause instanceof TimeoutFailure) {
        conversation.timedOut = true;
        const details = error.cause.lastHeartbeatDetails as ConversationProgress | undefined;
        conversation.lastBeatAt = details?.at ?? null;
        conversation.liveSince = details?.liveSince ?? null;
      }
    })
    .finally(() => {
      conversation.done = true;
    });
}

/** The conversation activity, on the chosen node's own queue or the shared `media` queue. */
function conversationActivity(input: ConversationInput, node: MediaNodeChoice | null): ConversationActivities['runConversation'] {
  return proxyActivities<Activities>({
    taskQueue: node?.taskQueue ?? TASK_QUEUES.media,
    // Only the chosen node polls its queue: a task it never takes means the node is gone (or starved: 0241).
    ...(node ? { scheduleToStartTimeout: CHOSEN_NODE_START_TIMEOUT_MS } : {}),
    // Waiting for the stream, the call itself, and time to save the transcript.
    startToCloseTimeout: (input.streamWaitSeconds + input.capSeconds + 120) * 1000,
    heartbeatTimeout: CONVERSATION_HEARTBEAT_TIMEOUT_MS,
    // A conversation cannot be replayed: one attempt (and a second start only when the first never ran, above).
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }).runConversation;
}

/**
 * The timeout by which the activity is known never to have run on its node, or null: not taken
 * within its start timeout, or taken and timed out without a single heartbeat (it beats as it begins).
 */
function timeoutOfNeverRun(error: unknown): TimeoutType | null {
  if (!(error instanceof ActivityFailure && error.cause instanceof TimeoutFailure)) return null;
  const { timeoutType, lastHeartbeatDetails } = error.cause;
  const neverRan = timeoutType === TimeoutType.SCHEDULE_TO_START || (timeoutType === TimeoutType.HEARTBEAT && lastHeartbeatDetails === undefined);
  return neverRan ? timeoutType : null;
}

/**
 * Calls started since this patch start a conversation on its chosen node a second time when the
 * first activity never ran there and the node still beats in the directory (docs/decisions/0241):
 * under a burst a task was handed to the node's poll and never reached its code, or not taken in
 * time. The second start claims the conversation the node is already running with the stream.
 */
export const CONVERSATION_STARTED_AGAIN_PATCH = 'conversation-started-again-when-never-run';
const { mediaNodeAlive } = proxyLocalActivities<Activities>(STORE_STEP_OPTIONS);
/** A second start still waits this long for a stream that has not come. */
const MIN_STREAM_WAIT_AGAIN_SECONDS = 3;

/** A media node that stops heartbeating for this long is taken for dead: the call ends with an error. */
export const CONVERSATION_HEARTBEAT_TIMEOUT_MS = 5_000;
