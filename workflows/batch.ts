import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { QueuedBatchCalls } from '../contracts/batches';
import type { callWorkflow } from './call';
import { CALL_REFUSALS, refusalOf, refusalOfRecordedReason, type CallRefusal } from '../contracts/refusals';
import {
  BATCH_HISTORY_LIMIT,
  batchStateQuery,
  cancelBatchUpdate,
  emptyCounts,
  pauseBatchUpdate,
  resumeBatchUpdate,
  type BatchCarry,
  type BatchState,
  type BatchStatus,
  type BatchWorkflowInput,
  type ContactCall,
  type ContactChange,
  type ContactStatus,
  type WaitingContact,
} from '../contracts/batches';
import { callStartOptions, callWorkflowId, type CallState } from '../contracts/calls';
import { TASK_QUEUES } from '../contracts/task-queues';

// Database and Temporal calls: retried until they are back (the batch's progress must not be lost).
const { queueBatchCalls, recordBatchProgress, hangUpQueuedBatchCalls } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** Contacts offered per round at most: the highest concurrency limit staff can grant (limit requests ask for up to 100). */
const MAX_OFFERED = 100;

/**
 * A refusal (contracts/refusals.ts) holds for every call of the batch: the batch pauses
 * (or, the agent gone, is canceled: CALL_REFUSALS' `batch`) and the contact waits for its call
 * again, its attempt not counted.
 */
const UNANSWERED = new Set(['no-answer', 'busy', 'failed']);
const FINAL: readonly BatchStatus[] = ['completed', 'canceled'];

interface InFlightCall {
  index: number;
  attempt: number;
}

/**
 * One batch of outbound calls (`batch-<batch_id>`, task queue `calls`). It waits for its
 * start time, then queues its contacts' calls in file order through the workspace's normal
 * queue, never more at once than the workspace's concurrency limit (so that other calls are
 * not stuck behind a whole file). Each call is the usual call workflow (`call-<call_id>`),
 * started as a child that outlives the batch (ABANDON); its result settles the contact:
 * completed, or unanswered (no-answer, busy, failed) and retried after the batch's spacing
 * while attempts remain. `pause`, `resume` and `cancel` answer once saved on the batch record;
 * cancel hangs up the batch's calls still queued and cancels the contacts never called.
 * Every write goes through one activity at a time (the main loop), so writes never race.
 * Past BATCH_HISTORY_LIMIT events it stops queuing, lets its calls in flight end, and
 * continues as new with its progress.
 */
export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchState> {
  const carried: BatchCarry | undefined = input.carried;
  const startAtMs = input.startAt ? Date.parse(input.startAt) : 0;
  let status: BatchStatus = carried?.status ?? (startAtMs > Date.now() ? 'scheduled' : 'running');
  let statusReason: string | null = carried?.statusReason ?? null;
  // Counts carried from a run before `voicemail` (or `do_not_call`) existed lack it: it starts at 0.
  const counts = carried ? { ...emptyCounts(), ...carried.counts } : { ...emptyCounts(), pending: input.contactsTotal };
  let nextIndex = carried?.nextIndex ?? 0;
  /** Sorted by due time, then file order. */
  const waiting: WaitingContact[] = [...(carried?.waiting ?? [])];
  let startedAt = carried?.startedAt ?? null;
  let endedAt: string | null = null;
  const runs = (carried?.runs ?? 0) + 1;
  const historyLimit = input.historyLimit ?? BATCH_HISTORY_LIMIT;

  const inFlight = new Map<string, InFlightCall>();
  const finished: { callId: string; status: string; reason: string | null; refusal: CallRefusal | null; voicemailAction?: CallState['voicemailAction'] }[] = [];
  const contactChanges = new Map<number, ContactChange>();
  let cancelUncalled = false;
  let hangUpBy: string | null = null;
  /** The workspace's limit left no room for more calls: offer again when one of ours ends. */
  let windowFull = false;
  /** Bumped by every change of the record; `saved` is the last one written. */
  let version = 0;
  let saved = 0;

  const state = (): BatchState => ({ status, statusReason, counts: { ...counts }, inFlight: inFlight.size, runs });
  const changed = () => {
    version++;
  };
  const move = (from: ContactStatus, to: ContactStatus) => {
    counts[from]--;
    counts[to]++;
  };
  const setStatus = (next: BatchStatus, reason: string | null) => {
    status = next;
    statusReason = reason;
    if (FINAL.includes(next)) endedAt ??= new Date().toISOString();
    changed();
  };
  const changeContact = (change: ContactChange) => {
    contactChanges.set(change.index, { ...contactChanges.get(change.index), ...change });
    changed();
  };
  const wait = (contact: WaitingContact) => {
    waiting.push(contact);
    waiting.sort((a, b) => a.dueAt - b.dueAt || a.index - b.index);
  };

  /** Cancels the batch: no more calls; contacts never called (or waiting for a retry) are canceled; queued calls are hung up. */
  const cancel = (by: string, reason: string | null) => {
    if (FINAL.includes(status)) return;
    counts.canceled += counts.pending + counts['retry-wait'];
    counts.pending = 0;
    counts['retry-wait'] = 0;
    waiting.length = 0;
    nextIndex = input.contactsTotal;
    cancelUncalled = true;
    if (inFlight.size) hangUpBy = by;
    setStatus('canceled', reason);
  };

  /**
   * Pause, resume and cancel are applied by the main loop between its steps (never while an
   * activity it awaits could be working from the state before), and answered once saved.
   */
  const requests: { action: 'pause' | 'resume' | 'cancel'; by: string; appliedAt: number | null }[] = [];
  const ask = async (action: (typeof requests)[number]['action'], by: string): Promise<BatchState> => {
    const request = { action, by, appliedAt: null as number | null };
    requests.push(request);
    await condition(() => request.appliedAt !== null && saved >= request.appliedAt);
    return state();
  };
  const apply = ({ action, by }: (typeof requests)[number]) => {
    if (action === 'cancel') cancel(by, null);
    else if (action === 'pause' && (status === 'running' || status === 'scheduled')) setStatus('paused', null);
    else if (action === 'resume' && status === 'paused') {
      windowFull = false;
      setStatus(startedAt === null && startAtMs > Date.now() ? 'scheduled' : 'running', null);
    }
  };
  setHandler(batchStateQuery, state);
  setHandler(pauseBatchUpdate, ({ by }) => ask('pause', by));
  setHandler(resumeBatchUpdate, ({ by }) => ask('resume', by));
  setHandler(cancelBatchUpdate, ({ by }) => ask('cancel', by));

  /** A call of the batch ended: its contact is settled, or waits for a retry. */
  const settle = ({ callId, status: callStatus, reason, refusal, voicemailAction }: (typeof finished)[number]) => {
    const call = inFlight.get(callId);
    if (!call) return;
    inFlight.delete(callId);
    windowFull = false;
    // The contact's number is on the do-not-call list (docs/decisions/0205): this contact only is
    // settled, never retried; the batch goes on. Recorded histories never have this refusal; the
    // patch marks the histories that take the branch, as for voicemail (0159).
    if (refusal === 'DoNotCall' && patched('batch-do-not-call-contacts')) {
      move('calling', 'do_not_call');
      changeContact({ index: call.index, status: 'do_not_call' });
      return;
    }
    const stopper = refusal ? CALL_REFUSALS[refusal].batch : undefined;
    if (stopper && callStatus !== 'completed') {
      if (stopper === 'cancel' || FINAL.includes(status)) {
        move('calling', 'canceled');
        changeContact({ index: call.index, status: 'canceled' });
        cancel('system', reason);
        return;
      }
      // Not the contact's fault: it waits at the front, the attempt not counted.
      move('calling', 'pending');
      wait({ index: call.index, status: 'pending', attempts: call.attempt - 1, dueAt: 0 });
      changeContact({ index: call.index, status: 'pending', attempts: call.attempt - 1 });
      if (status === 'running' || status === 'scheduled') setStatus('paused', reason);
      return;
    }
    // An answering machine answered (docs/decisions/0159): the contact is `voicemail`, and retried as an
    // unanswered call is when the agent hung up on it. Calls recorded before voicemail never end so,
    // and the patch marks the histories that take this branch.
    if (callStatus === 'completed' && voicemailAction && patched('batch-voicemail-contacts')) {
      if (voicemailAction === 'hang_up' && call.attempt < input.retry.maxAttempts && !FINAL.includes(status)) {
        const dueAt = Date.now() + input.retry.spacingSeconds * 1000;
        move('calling', 'retry-wait');
        wait({ index: call.index, status: 'retry-wait', attempts: call.attempt, dueAt });
        changeContact({ index: call.index, status: 'retry-wait', next_attempt_at: new Date(dueAt).toISOString() });
        return;
      }
      move('calling', 'voicemail');
      changeContact({ index: call.index, status: 'voicemail' });
      return;
    }
    if (UNANSWERED.has(callStatus) && call.attempt < input.retry.maxAttempts && !FINAL.includes(status)) {
      const dueAt = Date.now() + input.retry.spacingSeconds * 1000;
      move('calling', 'retry-wait');
      wait({ index: call.index, status: 'retry-wait', attempts: call.attempt, dueAt });
      changeContact({ index: call.index, status: 'retry-wait', next_attempt_at: new Date(dueAt).toISOString() });
      return;
    }
    const final: ContactStatus = callStatus === 'completed' || UNANSWERED.has(callStatus) ? (callStatus as ContactStatus) : 'canceled';
    move('calling', final);
    changeContact({ index: call.index, status: final });
  };

  /** The contacts due for a call now, retries first, then new ones in file order. */
  const offers = (): { offered: ContactCall[]; fromWaiting: number } => {
    const now = Date.now();
    const offered: ContactCall[] = [];
    let fromWaiting = 0;
    for (const contact of waiting) {
      if (contact.dueAt > now || offered.length >= MAX_OFFERED) break;
      offered.push({ index: contact.index, callId: newCallId(), attempt: contact.attempts + 1 });
      fromWaiting++;
    }
    for (let index = nextIndex; index < input.contactsTotal && offered.length < MAX_OFFERED; index++) offered.push({ index, callId: newCallId(), attempt: 1 });
    return { offered, fromWaiting };
  };

  const startCall = async (callInput: Parameters<typeof callWorkflow>[0], agentName: string) => {
    const failed = (error: unknown) =>
      finished.push({ callId: callInput.callId, status: 'failed', reason: error instanceof Error ? error.message : String(error), refusal: null });
    try {
      const child = await startChild<typeof callWorkflow>('callWorkflow', {
        workflowId: callWorkflowId(callInput.callId),
        taskQueue: TASK_QUEUES.calls,
        args: [callInput],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        ...callStartOptions(callInput, agentName, 'queued'),
      });
      void child.result().then(
        // Results recorded before refusals were typed carry only the reason text.
        (result: CallState) =>
          finished.push({
            callId: callInput.callId,
            status: result.status,
            reason: result.hangupReason,
            refusal: result.refusal !== undefined ? result.refusal : refusalOfRecordedReason(result.hangupReason),
            voicemailAction: result.voicemailAction,
          }),
        failed,
      );
    } catch (error) {
      failed(error);
    }
  };

  /** Queues what is due and fits; false when nothing was queued. */
  const dispatch = async (): Promise<boolean> => {
    const { offered, fromWaiting } = offers();
    if (!offered.length) return false;
    const stopFor = (refusal: CallRefusal) => {
      if (CALL_REFUSALS[refusal].batch === 'cancel') cancel('system', CALL_REFUSALS[refusal].reason);
      // A refusal of one number (DoNotCall) never comes from here: the batch-wide checks name no number.
      else setStatus('paused', CALL_REFUSALS[refusal].reason);
      return false;
    };
    let result: QueuedBatchCalls;
    try {
      result = await queueBatchCalls({ batchId: input.batchId, workspaceId: input.workspaceId, agentId: input.agentId, inFlight: inFlight.size, offered });
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      return stopFor(refusal);
    }
    // Histories recorded before refusals were typed: the activity answered them as text.
    if (result.refusal !== null) return stopFor(refusalOfRecordedReason(result.refusal) ?? 'AgentDeleted');
    if (result.queued < offered.length) windowFull = true;
    const taken = offered.slice(0, result.queued);
    const takenFromWaiting = Math.min(result.queued, fromWaiting);
    for (const contact of waiting.splice(0, takenFromWaiting)) move(contact.status, 'calling');
    for (const offer of taken.slice(takenFromWaiting)) {
      move('pending', 'calling');
      nextIndex = offer.index + 1;
    }
    for (const offer of taken) inFlight.set(offer.callId, { index: offer.index, attempt: offer.attempt });
    // The contacts' `calling` was written with the calls; the counts go with the next save.
    changed();
    // A result recorded before it carried the agent's name names the agent by id.
    await Promise.all(result.inputs.map((callInput) => startCall(callInput, result.agentName ?? input.agentId)));
    return result.queued > 0;
  };

  const save = async () => {
    const target = version;
    const contacts = [...contactChanges.values()];
    contactChanges.clear();
    const cancelNow = cancelUncalled;
    cancelUncalled = false;
    await recordBatchProgress({
      batchId: input.batchId,
      contacts,
      cancelUncalled: cancelNow,
      batch: { status, status_reason: statusReason, counts: { ...counts }, started_at: startedAt, ended_at: endedAt },
    });
    saved = target;
    showProgress();
  };
  /** The batch's line in the Temporal UI: its status, the contacts per status, and what it waits for. */
  const showProgress = () => {
    const why = statusReason ? ` (${statusReason})` : '';
    const when = status === 'scheduled' && input.startAt ? ` to start at ${input.startAt}` : '';
    const calls = inFlight.size ? `; ${inFlight.size} calls in flight` : '';
    setCurrentDetails(`${status}${why}${when}: ${shownCounts(counts)}${calls}`);
  };

  const applyRequests = () => {
    for (const request of requests.splice(0)) {
      apply(request);
      request.appliedAt = version;
    }
  };
  /** Until no update waits for an answer: requests arriving meanwhile are applied and saved. */
  const answerAll = async () => {
    for (;;) {
      applyRequests();
      if (saved < version) await save();
      else if (allHandlersFinished()) return;
      else await condition(() => requests.length > 0 || allHandlersFinished());
    }
  };

  for (;;) {
    applyRequests();
    while (finished.length) settle(finished.shift()!);
    if (status === 'scheduled' && startAtMs <= Date.now()) setStatus('running', null);
    if (status === 'running' && startedAt === null) {
      startedAt = new Date().toISOString();
      changed();
    }
    if (hangUpBy !== null) {
      const by = hangUpBy;
      hangUpBy = null;
      await hangUpQueuedBatchCalls({ callIds: [...inFlight.keys()], by });
    }
    const nothingLeft = nextIndex >= input.contactsTotal && waiting.length === 0 && inFlight.size === 0;
    if (nothingLeft && !FINAL.includes(status)) setStatus('completed', null);
    if (saved < version) {
      await save();
      continue;
    }
    if (FINAL.includes(status) && inFlight.size === 0) break;

    const info = workflowInfo();
    const draining = info.continueAsNewSuggested || info.historyLength > historyLimit;
    if (draining && inFlight.size === 0) {
      await answerAll();
      if (finished.length || FINAL.includes(status)) continue;
      return continueAsNew<typeof batchWorkflow>({ ...input, carried: { status, statusReason, nextIndex, waiting, counts, startedAt, runs } });
    }
    if (status === 'running' && !draining && !windowFull && (await dispatch())) continue;

    // Wake for a call's end, a message, the start time, or the next retry.
    const dueIn =
      status === 'scheduled'
        ? startAtMs - Date.now()
        : status === 'running' && waiting.length && !windowFull && !draining
          ? waiting[0].dueAt - Date.now()
          : null;
    const wake = () => finished.length > 0 || requests.length > 0 || saved < version || hangUpBy !== null;
    showProgress();
    if (dueIn === null) await condition(wake);
    else await condition(wake, Math.max(1, dueIn));
  }
  await answerAll();
  return state();

  function newCallId(): string {
    return uuid4().replace(/-/g, '');
  }
}

/** The counts as the details show them: `voicemail` and `do_not_call` only once a contact reached them (a batch that never does reads as before). */
function shownCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .filter(([name, n]) => (name !== 'voicemail' && name !== 'do_not_call') || n > 0)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
}
