import { condition, log, proxyActivities, setHandler, workflowInfo, allHandlersFinished } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { CallAgent, CallChanges, DialRefusal } from '../activities/calls/queue';
import { callingWindow } from './shared/calling-hours';
import {
  callStateQuery,
  hangupUpdate,
  providerStatusSignal,
  agentDeletedSignal,
  QUEUE_EXPIRY_MS,
  slotGrantedSignal,
  type CallState,
  type CallWorkflowInput,
  type HangupRequest,
  type ProviderStatusUpdate,
} from './shared/calls';

type Activities = ReturnType<typeof createActivities>;
type EventLevel = 'info' | 'warning' | 'error';

// Database and Temporal calls: retried until they are back (a call's state must not be lost).
const { recordEvent, loadCallAgent, queuePosition, enqueueCall, releaseSlot, checkBeforeDial, updateCall } = proxyActivities<Activities>({
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
/** How long past its cap a call may run before the workflow ends it itself (the provider's own time limit comes first). */
const CAP_GRACE_MS = 15_000;
/** How long a live hang-up waits for the provider's final status before answering. */
const HANGUP_ANSWER_WAIT_MS = 10_000;

/**
 * One call from the queue to its end (`call-<call_id>`, task queue `calls`). An outbound call:
 * `call.queued`; waits for its agent's calling hours, then for a slot from the workspace's
 * slot keeper (oldest first); checks credits and the agent at the front; `call.dequeued`;
 * dials through the telephony provider (`call.placed`); follows the provider's status
 * callbacks (`providerStatus`) to `call.started` and the end; releases its slot. The
 * `hangup` update cancels a queued call or ends a live one. 24 hours in the queue cancel it.
 */
export async function callWorkflow(input: CallWorkflowInput): Promise<CallState> {
  const state: CallState = { callId: input.callId, phase: 'queued', status: 'queued', grantedAt: null, hangupReason: null };
  let sequence = 0;
  let granted = false;
  let holdsSlot = false;
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
  setHandler(hangupUpdate, async (request) => {
    asked.hangup ??= request;
    const ended = () => state.phase === 'ended';
    if (state.phase === 'queued' || state.phase === 'waiting-for-hours') await condition(ended);
    else await condition(ended, HANGUP_ANSWER_WAIT_MS);
    return { status: state.status };
  });

  const emit = (type: string, message: string, level: EventLevel, latencyMs: number | null, data: Record<string, unknown> = {}) =>
    recordEvent({ workspaceId: input.workspaceId, callId: input.callId, agentId: input.agentId, sequence: sequence++, type, message, level, latencyMs, data, createdAt: new Date().toISOString() });
  const change = (changes: CallChanges) => updateCall({ callId: input.callId, changes });
  const release = async () => {
    await releaseSlot({ workspaceId: input.workspaceId, callId: input.callId });
    holdsSlot = false;
  };

  /** Ends a call that never connected: final status, `call.ended` with the reason as its message. */
  async function endUnconnected(status: 'canceled' | 'failed' | 'no-answer' | 'busy', reason: string, level: EventLevel, by: string, data: Record<string, unknown> = {}): Promise<CallState> {
    if (holdsSlot || granted) await release();
    const at = new Date().toISOString();
    state.status = status;
    state.hangupReason = reason;
    await change({ status, ended_at: at, hangup_by: by, hangup_reason: reason });
    await emit('call.ended', reason, level, null, data);
    state.phase = 'ended';
    await condition(allHandlersFinished);
    return state;
  }

  const position = await queuePosition({ workspaceId: input.workspaceId, queuedAt: input.queuedAt });
  await emit('call.queued', `queued at position ${position}`, 'info', null, { position, by: input.placedBy });

  // ---- the queue ----
  /** The agent as read once the call holds its slot. */
  let dialling: CallAgent | null = null;
  const expiresAt = Date.parse(input.queuedAt) + QUEUE_EXPIRY_MS;
  for (;;) {
    if (asked.hangup) return endUnconnected('canceled', 'canceled while queued', 'info', asked.hangup.by);
    if (asked.agentDeleted) return endUnconnected('canceled', 'agent deleted', 'warning', 'system');
    const left = expiresAt - Date.now();
    if (left <= 0) return endUnconnected('canceled', 'expired in queue', 'warning', 'system');
    const agent = await loadCallAgent({ workspaceId: input.workspaceId, agentId: input.agentId });
    if (!agent) return endUnconnected('canceled', 'agent deleted', 'warning', 'system');
    const window = callingWindow(new Date(), agent.hours);
    if (!window.open) {
      state.phase = 'waiting-for-hours';
      await condition(queueLeft, Math.min(window.opensInMs, left));
      continue;
    }
    state.phase = 'queued';
    await enqueueCall({ workspaceId: input.workspaceId, callId: input.callId, queuedAt: input.queuedAt });
    await condition(() => granted || queueLeft(), left);
    // A hang-up, a deleted agent or the expiry (this wait lasted until it) end the call at the top of the loop.
    if (!granted || queueLeft()) continue;
    holdsSlot = true;
    const refusal: DialRefusal = await checkBeforeDial({ workspaceId: input.workspaceId, agentId: input.agentId });
    if (refusal) return endUnconnected(refusal.reason === 'out of credits' ? 'failed' : 'canceled', refusal.reason, refusal.level, 'system');
    // Hours may have closed, or changed, while the call waited for its slot: give the slot back and wait again.
    dialling = await loadCallAgent({ workspaceId: input.workspaceId, agentId: input.agentId });
    if (!dialling) return endUnconnected('canceled', 'agent deleted', 'warning', 'system');
    if (!callingWindow(new Date(), dialling.hours).open) {
      await release();
      granted = false;
      continue;
    }
    break;
  }
  const agent = dialling;

  // ---- dialling ----
  state.phase = 'dialling';
  state.grantedAt = new Date().toISOString();
  await change({ dequeued_at: state.grantedAt });
  await emit('call.dequeued', 'a slot is free: dialling', 'info', Date.now() - Date.parse(input.queuedAt));
  const dial = await dialCall({ callId: input.callId, from: input.fromNumber, to: input.toNumber, timeLimitSeconds: agent.maxDurationSeconds }).catch((error: Error) => ({ refused: error.message }));
  if ('refused' in dial) return endUnconnected('failed', `dial refused: ${dial.refused}`, 'error', 'system');
  await change({ provider_call_id: dial.providerCallId, status: 'ringing' });
  state.status = 'ringing';
  await emit('call.placed', 'the provider accepted the dial request', 'info', null);

  // ---- live: follow the provider until the call ends ----
  state.phase = 'live';
  const capAt = Date.now() + agent.maxDurationSeconds * 1000 + CAP_GRACE_MS;
  let startedAt: number | null = null;
  let hangupSent = false;
  let endedBy: { by: string; reason: string } | null = null;
  const waiting = () => statuses.length > 0 || (asked.hangup !== null && !hangupSent);
  for (;;) {
    const untilCap = capAt - Date.now();
    if (untilCap <= 0 && !hangupSent) {
      // The cap passed without a final status: end the call from our side.
      hangupSent = true;
      endedBy = { by: 'system', reason: 'max duration reached' };
      await hangupProviderCall({ callId: input.callId });
    }
    // Past the cap, with the hang-up sent, only the provider's final status is left to wait for
    // (a timed wait of zero would return at once and spin).
    if (untilCap > 0) await condition(waiting, untilCap);
    else await condition(waiting);
    const request = hangupRequest();
    if (request && !hangupSent) {
      hangupSent = true;
      endedBy = { by: request.by, reason: 'hung up through the API' };
      await hangupProviderCall({ callId: input.callId });
      continue;
    }
    const update = statuses.shift();
    if (!update) continue;
    if (update.status === 'ringing') continue;
    if (update.status === 'in-progress' && startedAt === null) {
      startedAt = Date.parse(update.at);
      state.status = 'in-progress';
      await change({ status: 'in-progress', started_at: update.at, provider_status: update.status });
      await emit('call.started', `outbound call with ${agent.name}`, 'info', null, {
        channel: 'phone',
        from: input.fromNumber,
        to: input.toNumber,
        stt: agent.stt,
        llm: agent.llm,
        tts: agent.tts,
        started_by: '',
        values: input.valueKeys,
      });
      continue;
    }
    if (!FINAL_PROVIDER_STATUSES.has(update.status)) continue;
    if (startedAt === null) {
      const status = update.status === 'completed' ? 'failed' : (update.status as 'no-answer' | 'busy' | 'failed' | 'canceled');
      return endUnconnected(status, `not connected: ${update.status}`, 'warning', endedBy?.by ?? 'provider', { plivo: update.status });
    }
    const durationSeconds = update.durationSeconds ?? Math.max(0, Math.round((Date.parse(update.at) - startedAt) / 1000));
    await release();
    const ended = endedBy ?? { by: 'caller', reason: 'the caller hung up' };
    state.status = 'completed';
    state.hangupReason = ended.reason;
    await change({ status: 'completed', ended_at: update.at, duration_seconds: durationSeconds, hangup_by: ended.by, hangup_reason: ended.reason, provider_status: update.status });
    await emit('call.ended', `ended by ${ended.by}: ${ended.reason}`, 'info', null, { duration_seconds: durationSeconds });
    state.phase = 'ended';
    await condition(allHandlersFinished);
    log.info('call ended', { callId: input.callId, durationSeconds, runId: workflowInfo().runId });
    return state;
  }
}
