import { ActivityCancellationType, ActivityFailure, CancellationScope, condition, executeChild, log, proxyActivities, setHandler, TimeoutFailure, workflowInfo, allHandlersFinished } from '@temporalio/workflow';
import { CONVERSATION_CANCELED_REASON, CONVERSATION_SEQUENCE_END, CONVERSATION_SEQUENCE_START, type ConversationActivities, type ConversationInput, type ConversationOutcome, type ConversationProgress } from './shared/conversation';
import { TASK_QUEUES } from './shared/task-queues';
import { CALL_REFUSALS, refusalOf, refusalOfRecordedReason, type CallRefusal } from './shared/refusals';
import { analyticsWorkflowId } from './shared/analytics';
import { analyticsWorkflow } from './analytics';
import { callLength, clockTime, showCallDetails, showCallStatus } from './call-progress';
import { AgentId, Kind, WorkspaceId } from './shared/search-attributes';
import type { createActivities } from '../activities';
import type { CallAgent, CallChanges } from '../domain/calls/queue';
import type { CallEventInput } from '../activities/calls/steps';
import { callingWindow } from './shared/calling-hours';
import {
  answerUpdate,
  callStateQuery,
  hangupUpdate,
  mediaNodeSignal,
  providerStatusSignal,
  agentDeletedSignal,
  QUEUE_EXPIRY_MS,
  slotGrantedSignal,
  type CallState,
  type CallWorkflowInput,
  type HangupRequest,
  type ProviderStatusUpdate,
} from './shared/calls';

type Activities = ReturnType<typeof createActivities> & ConversationActivities;
type EventLevel = 'info' | 'warning' | 'error';
/** prepareDial's answer; `refusal` and a null agent only in histories recorded before refusals were typed. */
type RecordedDialCheck = { agent: CallAgent | null; hoursClosed: boolean; refusal?: { reason: string } | null };

// Database and Temporal calls: retried until they are back (a call's state must not be lost).
const { recordCallStep, queueCall, prepareDial, beginLiveCall, closeCall, loadCallAgent, enqueueCall, releaseSlot } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// Creating a call at the provider is not idempotent (a timed-out request may have placed it):
// one attempt, and any failure ends the call as a refused dial.
const { dialCall } = proxyActivities<Activities>({ startToCloseTimeout: '20 seconds', retry: { maximumAttempts: 1 } });
// Hanging up is idempotent at the provider: retried until it answers.
const { hangupProviderCall } = proxyActivities<Activities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/** Provider statuses that end a call. */
const FINAL_PROVIDER_STATUSES = new Set(['completed', 'no-answer', 'busy', 'failed', 'canceled']);
/**
 * The provider's own time limit is a backstop after ours (the conversation's cap, then the
 * workflow's cap + grace): our limits end the call first, with their reason.
 */
const PROVIDER_LIMIT_MARGIN_SECONDS = 20;
/** How long past its cap a call may run before the workflow ends it itself (the provider's own time limit comes first). */
const CAP_GRACE_MS = 15_000;
/** How long a live hang-up waits for the provider's final status before answering. */
const HANGUP_ANSWER_WAIT_MS = 10_000;

/** After the provider's final status (the conversation is canceled then), how long it may take to stop before the call ends without it. */
const CONVERSATION_STOP_WAIT_MS = 10_000;
/** The provider connects a call's stream within a second or two of the answer. */
const PHONE_STREAM_WAIT_SECONDS = 15;
/** A browser page has its stream token's life (60 s) to connect. */
const BROWSER_STREAM_WAIT_SECONDS = 65;

/**
 * Starts the conversation activity in its own cancellation scope; `conversation.done` turns
 * true when it ends, with its outcome, or the failure and the time of its last heartbeat.
 */
interface ConversationRun {
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
}

function startConversation(conversation: ConversationRun, input: ConversationInput): void {
  const { runConversation } = proxyActivities<Activities>({
    taskQueue: TASK_QUEUES.media,
    // Waiting for the stream, the call itself, and time to save the transcript.
    startToCloseTimeout: (input.streamWaitSeconds + input.capSeconds + 120) * 1000,
    heartbeatTimeout: CONVERSATION_HEARTBEAT_TIMEOUT_MS,
    // A conversation cannot be replayed: one attempt.
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const scope = new CancellationScope();
  conversation.scope = scope;
  scope
    .run(() => runConversation(input))
    .then((outcome) => {
      conversation.outcome = outcome;
    })
    .catch((error: unknown) => {
      conversation.failure = error instanceof Error ? (error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message) : String(error);
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

/** A media node that stops heartbeating for this long is taken for dead: the call ends with an error. */
const CONVERSATION_HEARTBEAT_TIMEOUT_MS = 5_000;

/**
 * One call from the queue to its end (`call-<call_id>`, task queue `calls`). An outbound call:
 * `call.queued`; waits for its agent's calling hours, then for a slot from the workspace's
 * slot keeper (oldest first); checks credits and the agent at the front; `call.dequeued`;
 * dials through the telephony provider (`call.placed`); follows the provider's status
 * callbacks (`providerStatus`) to `call.started` and the end; releases its slot. The
 * `hangup` update cancels a queued call or ends a live one. 24 hours in the queue cancel it.
 */
export async function callWorkflow(input: CallWorkflowInput): Promise<CallState> {
  const state: CallState = { callId: input.callId, phase: 'queued', status: 'queued', grantedAt: null, hangupReason: null, capReason: null, refusal: null };
  let sequence = 0;
  let granted = false;
  let holdsSlot = false;
  /** Enqueued with the slot keeper and not released since (queued or granted). */
  let inKeeperQueue = false;
  // Set by handlers; read through the object so that control-flow narrowing does not assume it stays null.
  const asked: { hangup: HangupRequest | null; agentDeleted: boolean } = { hangup: null, agentDeleted: false };
  const queueLeft = () => asked.hangup !== null || asked.agentDeleted;
  const hangupRequest = () => asked.hangup;
  const statuses: ProviderStatusUpdate[] = [];

  setHandler(callStateQuery, () => state);
  setHandler(slotGrantedSignal, () => {
    granted = true;
  });
  setHandler(agentDeletedSignal, () => {
    asked.agentDeleted = true;
  });
  setHandler(providerStatusSignal, (update) => {
    statuses.push(update);
  });
  // The answer waits here for the conversation's media node (no polling of the call record).
  let mediaNodeUrl: string | null = null;
  setHandler(mediaNodeSignal, ({ url }) => {
    mediaNodeUrl ??= url;
  });
  setHandler(answerUpdate, async (request) => {
    if (request.status) statuses.push(request.status);
    const ended = () => state.phase === 'ended';
    await condition(() => mediaNodeUrl !== null || ended(), Math.max(1, request.waitMs));
    return { mediaNodeUrl: ended() ? null : mediaNodeUrl, ended: ended() };
  });
  setHandler(hangupUpdate, async (request) => {
    asked.hangup ??= request;
    const ended = () => state.phase === 'ended';
    if (state.phase === 'queued' || state.phase === 'waiting-for-hours') await condition(ended);
    else await condition(ended, HANGUP_ANSWER_WAIT_MS);
    return { status: state.status };
  });

  /** The next timeline entry's names (the step that writes it adds what it says). */
  const nextEntry = () => ({ workspaceId: input.workspaceId, callId: input.callId, agentId: input.agentId, sequence: sequence++ });
  const event = (type: string, message: string, level: EventLevel, latencyMs: number | null, data: Record<string, unknown> = {}): CallEventInput => ({ ...nextEntry(), type, message, level, latencyMs, data, createdAt: new Date().toISOString() });
  /** One step: the record's changes, then the event. */
  const step = (changes: CallChanges | undefined, entry?: CallEventInput) => recordCallStep({ callId: input.callId, changes, event: entry });
  const release = async () => {
    await releaseSlot({ workspaceId: input.workspaceId, callId: input.callId });
    holdsSlot = false;
    inKeeperQueue = false;
  };

  /** Ends a call that never connected: final status, `call.ended` with the reason as its message. */
  async function endUnconnected(status: 'canceled' | 'failed' | 'no-answer' | 'busy', reason: string, level: EventLevel, by: string, data: Record<string, unknown> = {}, refusal: CallRefusal | null = null): Promise<CallState> {
    // A call still in the keeper's queue leaves it (`release` also takes queued calls out).
    if (holdsSlot || granted || inKeeperQueue) await release();
    const at = new Date().toISOString();
    state.status = status;
    state.hangupReason = reason;
    state.refusal = refusal;
    await step({ status, ended_at: at, hangup_by: by, hangup_reason: reason }, event('call.ended', reason, level, null, data));
    showCallStatus(status, `${status}: ${reason}`);
    state.phase = 'ended';
    await condition(allHandlersFinished);
    return state;
  }

  /** A call refused at the front of the queue (or whose agent is gone): its status, reason and level by type. */
  const endRefused = (refusal: CallRefusal, status: 'canceled' | 'failed' = CALL_REFUSALS[refusal].callStatus) =>
    endUnconnected(status, CALL_REFUSALS[refusal].reason, CALL_REFUSALS[refusal].level, 'system', {}, refusal);

  let agent: CallAgent;
  if (input.direction === 'outbound') {
    // `call.queued`, the agent, and (its hours open) the keeper's queue, in one step.
    const queued = await queueCall({ callId: input.callId, workspaceId: input.workspaceId, agentId: input.agentId, queuedAt: input.queuedAt, placedBy: input.placedBy, event: nextEntry(), at: new Date().toISOString() });
    inKeeperQueue = queued.enqueued;
    if (queued.enqueued) showCallDetails(`queued at position ${queued.position}, waiting for a free slot`);
    /** The agent as read at the start of the next round of the queue (read once here for the first). */
    let read: CallAgent | null | undefined = queued.agent;

    // ---- the queue ----
    /** The agent as read once the call holds its slot. */
    let dialling: CallAgent | null = null;
    const expiresAt = Date.parse(input.queuedAt) + QUEUE_EXPIRY_MS;
    for (;;) {
      if (asked.hangup) return endUnconnected('canceled', 'canceled while queued', 'info', asked.hangup.by);
      if (asked.agentDeleted) return endRefused('AgentDeleted');
      const left = expiresAt - Date.now();
      if (left <= 0) return endUnconnected('canceled', 'expired in queue', 'warning', 'system');
      const agent = read === undefined ? await loadCallAgent({ workspaceId: input.workspaceId, agentId: input.agentId }) : read;
      read = undefined;
      if (!agent) return endRefused('AgentDeleted');
      if (!inKeeperQueue) {
        const window = callingWindow(new Date(), agent.hours);
        if (!window.open) {
          state.phase = 'waiting-for-hours';
          showCallDetails(`queued, waiting for ${agent.name}'s calling hours (open at ${clockTime(Date.now() + window.opensInMs)})`);
          await condition(queueLeft, Math.min(window.opensInMs, left));
          continue;
        }
        await enqueueCall({ workspaceId: input.workspaceId, callId: input.callId, queuedAt: input.queuedAt });
        inKeeperQueue = true;
        showCallDetails('queued, waiting for a free slot (calling hours open)');
      }
      state.phase = 'queued';
      await condition(() => granted || queueLeft(), left);
      // A hang-up, a deleted agent or the expiry (this wait lasted until it) end the call at the top of the loop.
      if (!granted || queueLeft()) continue;
      holdsSlot = true;
      // The sequence is taken only if the step writes `call.dequeued` (no gap on the timeline otherwise).
      const dequeueEntry = { workspaceId: input.workspaceId, callId: input.callId, agentId: input.agentId, sequence };
      const at = new Date().toISOString();
      let check: RecordedDialCheck;
      try {
        check = await prepareDial({ callId: input.callId, workspaceId: input.workspaceId, agentId: input.agentId, queuedAt: input.queuedAt, event: dequeueEntry, at });
      } catch (error) {
        const refusal = refusalOf(error);
        if (!refusal) throw error;
        return endRefused(refusal);
      }
      // Histories recorded before refusals were typed: the activity answered them as text.
      const recorded = refusalOfRecordedReason(check.refusal?.reason);
      if (recorded) return endRefused(recorded);
      if (!check.agent) return endRefused('AgentDeleted');
      // Hours may have closed, or changed, while the call waited for its slot: give the slot back and wait again.
      if (check.hoursClosed) {
        await release();
        granted = false;
        continue;
      }
      sequence++;
      dialling = check.agent;
      state.grantedAt = at;
      break;
    }
    agent = dialling;

    // ---- dialling ----
    state.phase = 'dialling';
    showCallDetails(`dialling ${input.toNumber} from ${input.fromNumber}`);
    const dial = await dialCall({ callId: input.callId, from: input.fromNumber, to: input.toNumber, timeLimitSeconds: agent.maxDurationSeconds + PROVIDER_LIMIT_MARGIN_SECONDS }).catch((error: Error) => ({ refused: error.message }));
    if ('refused' in dial) return endUnconnected('failed', `dial refused: ${dial.refused}`, 'error', 'system');
    state.status = 'ringing';
    await step({ provider_call_id: dial.providerCallId, status: 'ringing' }, event('call.placed', 'the provider accepted the dial request', 'info', null));
    showCallStatus('ringing', `ringing ${input.toNumber}`);
  } else {
    // Inbound and browser calls were admitted live (the API took their slot): they begin at call.started.
    holdsSlot = true;
    const live = await loadCallAgent({ workspaceId: input.workspaceId, agentId: input.agentId });
    if (!live) return endRefused('AgentDeleted', 'failed');
    agent = live;
    statuses.push({ status: 'in-progress', providerCallId: input.providerCallId ?? '', at: input.queuedAt });
  }
  /** Browser calls have no telephony provider: the conversation's end is the call's end. */
  const viaProvider = input.direction !== 'browser';

  // ---- live: follow the provider; the conversation runs in the media service ----
  state.phase = 'live';
  let capAt = Date.now() + agent.maxDurationSeconds * 1000 + CAP_GRACE_MS;
  let startedAt: number | null = null;
  let hangupSent = false;
  // Set inside hangUp (a closure): the cast keeps TypeScript from narrowing it to null.
  let endedBy = null as { by: string; reason: string; level: EventLevel } | null;
  let finalStatus: ProviderStatusUpdate | null = null;
  let finalWaitUntil: number | null = null;
  const conversation: ConversationRun = { scope: null, done: false, canceled: false, outcome: null, failure: null, timedOut: false, lastBeatAt: null, liveSince: null };
  const stopConversation = () => {
    if (!conversation.scope || conversation.done) return;
    conversation.canceled = true;
    conversation.scope.cancel();
  };
  const hangUp = async (by: { by: string; reason: string; level: EventLevel }) => {
    endedBy ??= by;
    if (hangupSent) return;
    hangupSent = true;
    showCallDetails(`hanging up: ${by.reason}`);
    if (viaProvider) await hangupProviderCall({ callId: input.callId });
    else stopConversation();
  };
  const waiting = () => statuses.length > 0 || (asked.hangup !== null && !hangupSent) || (conversation.done && (!hangupSent || !viaProvider)) || (finalStatus !== null && (conversation.done || conversation.scope === null));
  for (;;) {
    if (finalStatus && (conversation.done || conversation.scope === null)) break;
    if (!viaProvider && conversation.done) break;
    const deadline = finalWaitUntil ?? capAt;
    const left = deadline - Date.now();
    if (left <= 0) {
      if (finalWaitUntil !== null) {
        // The provider says the call is over and the conversation, canceled then, has not
        // stopped: end the call without it.
        log.warn('conversation did not stop when canceled; the call ends without it', { callId: input.callId });
        break;
      }
      if (!hangupSent) {
        // The cap passed and the call is still on: end it from our side, whatever the media service does.
        stopConversation();
        await hangUp({ by: 'system', reason: state.capReason ?? 'max duration reached', level: 'info' });
      }
    }
    if (left > 0) await condition(waiting, left);
    else await condition(waiting);
    const request = hangupRequest();
    if (request && !hangupSent) {
      await hangUp({ by: request.by, reason: 'hung up through the API', level: 'info' });
      continue;
    }
    // The conversation ended (or failed) while the call is still up: end the call.
    if (conversation.done && !hangupSent && startedAt !== null && finalStatus === null) {
      const outcome = conversation.outcome;
      if (outcome) await hangUp({ by: outcome.endedBy, reason: outcome.reason, level: outcome.level });
      else {
        await step(undefined, event('error', `the conversation stopped: ${conversation.failure ?? 'unknown failure'}`, 'error', null, { provider: 'media' }));
        await hangUp({ by: 'system', reason: 'error', level: 'error' });
      }
      continue;
    }
    const update = statuses.shift();
    if (!update) continue;
    if (update.status === 'ringing') continue;
    if (update.status === 'in-progress' && startedAt === null && finalStatus === null) {
      startedAt = Date.parse(update.at);
      state.status = 'in-progress';
      // The provider is waiting on the answer URL until the conversation starts: these go together.
      const cap = await beginLiveCall({
        callId: input.callId,
        workspaceId: input.workspaceId,
        maxDurationSeconds: agent.maxDurationSeconds,
        changes: { status: 'in-progress', started_at: update.at, provider_status: update.status },
        event: event('call.started', `${input.direction} call with ${agent.name}`, 'info', null, {
          channel: viaProvider ? 'phone' : 'browser',
          from: input.fromNumber,
          to: input.toNumber,
          stt: agent.stt,
          llm: agent.llm,
          tts: agent.tts,
          started_by: input.direction === 'browser' ? input.placedBy : '',
          values: input.valueKeys,
        }),
      });
      state.capReason = cap.capReason;
      capAt = startedAt + cap.capSeconds * 1000 + CAP_GRACE_MS;
      showCallStatus('in-progress', `live since ${clockTime(startedAt)} with ${agent.name}, for at most ${callLength(cap.capSeconds)}`);
      startConversation(conversation, { callId: input.callId, workspaceId: input.workspaceId, agentId: input.agentId, sequenceBase: CONVERSATION_SEQUENCE_START, capSeconds: cap.capSeconds, capReason: cap.capReason, streamWaitSeconds: viaProvider ? PHONE_STREAM_WAIT_SECONDS : BROWSER_STREAM_WAIT_SECONDS });
      sequence = CONVERSATION_SEQUENCE_END;
      continue;
    }
    if (!FINAL_PROVIDER_STATUSES.has(update.status) || finalStatus) continue;
    if (startedAt === null) {
      const status = update.status === 'completed' ? 'failed' : (update.status as 'no-answer' | 'busy' | 'failed' | 'canceled');
      return endUnconnected(status, `not connected: ${update.status}`, 'warning', endedBy?.by ?? 'provider', { plivo: update.status });
    }
    finalStatus = update;
    showCallDetails(`the provider ended the call (${update.status}): saving the conversation`);
    // The call is over at the provider (the caller hung up, our hang-up went through, or the
    // conversation ended and closed the stream): stop a conversation still running, also one
    // still waiting for its stream; it saves what it has and returns.
    stopConversation();
    finalWaitUntil = Date.now() + CONVERSATION_STOP_WAIT_MS;
    // No longer live: the slot goes to the next call now, not after the conversation's bookkeeping.
    if (holdsSlot) await release();
  }

  // ---- the end of a connected call: charge, record, analytics ----
  const outcome = conversation.outcome;
  // Our own reason first (API hang-up, the cap), then the conversation's, unless it only ended
  // because we canceled it when the provider said the call was over: then the caller hung up.
  const conversationEnded = outcome && outcome.reason !== CONVERSATION_CANCELED_REASON ? { by: outcome.endedBy, reason: outcome.reason, level: outcome.level } : null;
  // A conversation that failed on its own (its media node stopped heartbeating) is an error, even
  // when the provider's final status came first (the stream died with the node).
  const failedOnItsOwn = !outcome && conversation.failure !== null && (conversation.timedOut || !conversation.canceled);
  const failedEnding = failedOnItsOwn ? { by: 'system', reason: 'error', level: 'error' as EventLevel } : null;
  const ended = endedBy ?? failedEnding ?? conversationEnded ?? { by: 'caller', reason: 'the caller hung up', level: 'info' as EventLevel };
  if (failedOnItsOwn && !endedBy) await step(undefined, event('error', `the conversation stopped: ${conversation.failure}`, 'error', null, { provider: 'media' }));
  // Billing rule 2: charged for the time the agent was live, from the stream's arrival to the
  // conversation's end (or the provider's final status, or a dead node's last heartbeat). A
  // conversation that never got its stream costs nothing.
  const liveFrom = outcome ? Date.parse(outcome.startedAt) : conversation.liveSince;
  const endCandidates = [outcome ? Date.parse(outcome.endedAt) : null, conversation.lastBeatAt, finalStatus ? Date.parse(finalStatus.at) : null].filter((t): t is number => t !== null);
  const endedAtMs = Math.max(startedAt!, Math.min(...(endCandidates.length ? endCandidates : [Date.now()])));
  const durationSeconds = liveFrom === null ? 0 : Math.round(Math.max(0, endedAtMs - Math.max(startedAt!, liveFrom)) / 100) / 10;
  const endedAt = new Date(endedAtMs).toISOString();
  if (holdsSlot) await release();
  // Charged once, the record closed with its cost, then `call.ended`: one step.
  const { costPaise } = await closeCall({
    callId: input.callId,
    workspaceId: input.workspaceId,
    durationSeconds,
    endedAt,
    changes: { status: 'completed', ended_at: endedAt, duration_seconds: durationSeconds, hangup_by: ended.by, hangup_reason: ended.reason, provider_status: finalStatus?.status ?? 'completed' },
    event: event('call.ended', `ended by ${ended.by}: ${ended.reason}`, ended.level === 'error' ? 'error' : 'info', null, {
      duration_seconds: durationSeconds,
      // A number, as the contract types it; whether the agent was heard at all is `agent_spoke`
      // (false when the conversation never went live, null when its media node died and the
      // conversation's outcome is unknown).
      avg_first_audio_ms: outcome?.avgFirstAudioMs ?? 0,
      agent_spoke: outcome ? outcome.avgFirstAudioMs !== null : liveFrom === null ? false : null,
      usage: outcome?.usage ?? { stt_seconds: 0, tts_characters: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_calls: 0 },
    }),
  });
  state.status = 'completed';
  state.hangupReason = ended.reason;
  state.phase = 'ended';
  const story = `completed: live ${callLength(durationSeconds)}, charged ${costPaise} paise (ended by ${ended.by}: ${ended.reason})`;
  showCallStatus('completed', `${story}; post-call analytics running`);
  log.info('call ended', { callId: input.callId, durationSeconds, costPaise, runId: workflowInfo().runId });
  // Summary and extractions, then `call.completed` (once, from the child, whatever the model does).
  await executeChild(analyticsWorkflow, {
    workflowId: analyticsWorkflowId(input.callId),
    taskQueue: TASK_QUEUES.analytics,
    args: [{ callId: input.callId, workspaceId: input.workspaceId, agentId: input.agentId, sequence: sequence++ }],
    typedSearchAttributes: [
      { key: WorkspaceId, value: input.workspaceId },
      { key: AgentId, value: input.agentId },
      { key: Kind, value: 'analytics' },
    ],
    staticSummary: `post-call analytics of call ${input.callId}`,
    staticDetails: `Summary and extractions of call \`${input.callId}\` (workflow \`${workflowInfo().workflowId}\`) by the language model, then \`call.completed\`.`,
  });
  showCallDetails(story);
  await condition(allHandlersFinished);
  return state;
}
