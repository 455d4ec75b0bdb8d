import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { callWorkflowId, slotGrantedSignal } from '../contracts/calls';
import {
  enqueueSignal,
  releaseSignal,
  setLimitSignal,
  slotsStateQuery,
  tryAcquireUpdate,
  type AcquireResult,
  type AcquireSlot,
  type ActiveCall,
  type EnqueueCall,
  type SlotKeeperInput,
  type SlotKeeperState,
} from '../contracts/slots';

const { concurrencyLimitOf, endedCalls } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' }, // MongoDB may be down for a while: retry until it is back
});

/**
 * The concurrency limit of one workspace (`slots-<workspace_id>`, task queue `calls`); the
 * protocol is in contracts/slots.ts. It never ends: it continues as new, with its
 * state, when Temporal suggests it.
 *
 * Every decision is made synchronously inside the handler that makes a slot free (`release`,
 * `setLimit`, a grant that could not be delivered) or takes one (`tryAcquire`): the oldest
 * queued call takes the slot at once, before any later message is looked at. So the order is
 * exact and the count can never pass the limit, whatever arrives together. Only the delivery
 * of a grant (a signal to `call-<call_id>`) waits; the call counts as active from the
 * decision on, and a grant its workflow cannot receive (it is gone) frees the slot again.
 *
 * One keeper takes a few hundred signals a second. Past that (a batch enqueueing thousands
 * at once) the server fails its workflow tasks to flush the signals buffered meanwhile, and
 * grants wait until the flood ends; nothing is lost (test/workflows/slots.test.ts).
 */
export async function slotKeeperWorkflow(input: SlotKeeperInput): Promise<never> {
  const carried = input.carried;
  const state: SlotKeeperState = {
    workspaceId: input.workspaceId,
    limit: carried?.limit ?? null,
    active: [...(carried?.active ?? [])],
    queue: [...(carried?.queue ?? [])],
  };
  /** The ids in `state.queue`, so that an enqueue is not a scan of a long queue. */
  const queued = new Set(state.queue.map((call) => call.callId));
  /** Slots decided but not yet signalled to their call, oldest first. */
  const grantsToDeliver: ActiveCall[] = [];

  const activeIndex = (callId: string) => state.active.findIndex((call) => call.callId === callId);
  const hasFreeSlot = () => state.limit !== null && state.active.length < state.limit;

  /** Hands every free slot to the oldest queued calls. */
  function grantFreeSlots(): void {
    while (hasFreeSlot() && state.queue.length > 0) {
      const next = state.queue.shift() as EnqueueCall;
      queued.delete(next.callId);
      const granted: ActiveCall = { callId: next.callId, channel: 'outbound', since: new Date().toISOString() };
      state.active.push(granted);
      grantsToDeliver.push(granted);
    }
    showState();
  }

  function takeOutOfQueue(callId: string): void {
    if (!queued.delete(callId)) return;
    state.queue.splice(
      state.queue.findIndex((call) => call.callId === callId),
      1,
    );
  }

  /** The next calls in line, by id, so that ops can find them (a long queue is cut short). */
  function showState(): void {
    const next = state.queue.slice(0, SHOWN_IN_LINE).map((call) => call.callId);
    const line = next.length ? `; next in line: ${next.join(', ')}${state.queue.length > next.length ? ', ...' : ''}` : '';
    setCurrentDetails(
      `workspace ${input.workspaceId}, limit ${state.limit ?? 'not read yet'}: ${state.active.length} active, ${state.queue.length} queued${line}`,
    );
  }

  setHandler(slotsStateQuery, () => state);

  setHandler(enqueueSignal, (call) => {
    if (!validEnqueue(call)) return log.warn('enqueue signal ignored: it needs {"callId": "<id>", "queuedAt": "<ISO time>"}', { call });
    // A repeated signal (signal-with-start retried) must not queue the call twice or queue a call that holds a slot.
    if (queued.has(call.callId) || activeIndex(call.callId) >= 0) return;
    const entry: EnqueueCall = { callId: call.callId, queuedAt: call.queuedAt };
    state.queue.splice(insertionPoint(state.queue, entry), 0, entry);
    queued.add(entry.callId);
    grantFreeSlots();
  });

  setHandler(releaseSignal, (call) => {
    if (typeof call?.callId !== 'string') return log.warn('release signal ignored: it needs {"callId": "<id>"}', { call });
    const index = activeIndex(call.callId);
    if (index >= 0) {
      state.active.splice(index, 1);
      grantFreeSlots();
    } else {
      takeOutOfQueue(call.callId);
      showState();
    }
  });

  setHandler(setLimitSignal, (change) => {
    const limit = change?.limit;
    if (!Number.isInteger(limit) || limit < 0) return log.warn('setLimit signal ignored: it needs {"limit": <whole number >= 0>}', { change });
    log.info('concurrency limit set', { workspaceId: input.workspaceId, from: state.limit, to: limit });
    // A lower limit evicts nobody: it only stops granting until enough calls have ended.
    state.limit = limit;
    grantFreeSlots();
  });

  setHandler(
    tryAcquireUpdate,
    async (ask: AcquireSlot): Promise<AcquireResult> => {
      await condition(() => state.limit !== null);
      // Queued calls have waited longest: a slot that has just become free is theirs first.
      grantFreeSlots();
      let granted = activeIndex(ask.callId) >= 0;
      if (!granted && hasFreeSlot()) {
        takeOutOfQueue(ask.callId);
        state.active.push({ callId: ask.callId, channel: ask.channel, since: new Date().toISOString() });
        granted = true;
        showState();
      }
      return { granted, limit: state.limit as number, active: state.active.length };
    },
    {
      // A malformed ask is refused before it is written to history.
      validator: (ask: AcquireSlot) => {
        if (typeof ask?.callId !== 'string' || !ask.callId) throw new Error('tryAcquire needs a callId');
        if (ask.channel !== 'inbound' && ask.channel !== 'browser') throw new Error('tryAcquire is for inbound and browser calls');
      },
    },
  );

  if (state.limit === null) {
    const limit = await concurrencyLimitOf({ workspaceId: input.workspaceId });
    state.limit ??= limit; // a setLimit that arrived during the read is newer than the read
  }
  grantFreeSlots();
  void reconcile();

  for (;;) {
    await condition(() => grantsToDeliver.length > 0 || (workflowInfo().continueAsNewSuggested && allHandlersFinished()));
    if (grantsToDeliver.length > 0) {
      await deliver(grantsToDeliver.splice(0));
      continue;
    }
    // No grant is in flight and no handler is running, and this runs in the activation that
    // saw it: every message received so far is in `state`. One that comes later makes the
    // server refuse this task, and the run goes on with it (nothing is lost).
    await continueAsNew<typeof slotKeeperWorkflow>({ workspaceId: input.workspaceId, carried: state });
  }

  /**
   * A call workflow gives its slot back on every path, but one that is terminated (an operator
   * in the UI) or fails cannot: every few minutes, slots held for a while by calls whose
   * workflows are no longer running are freed.
   */
  async function reconcile(): Promise<void> {
    for (;;) {
      await sleep(RECONCILE_EVERY_MS);
      const cutoff = Date.now() - RECONCILE_MIN_AGE_MS;
      const held = state.active.filter((call) => Date.parse(call.since) < cutoff).map((call) => call.callId);
      if (!held.length) continue;
      const ended = await endedCalls({ callIds: held });
      for (const callId of ended) {
        const index = activeIndex(callId);
        if (index < 0) continue;
        log.warn('slot freed: its call workflow is no longer running', { callId });
        state.active.splice(index, 1);
      }
      if (ended.length) grantFreeSlots();
    }
  }

  /** Signals each call its slot; a call that cannot receive it gives its slot back. */
  async function deliver(grants: ActiveCall[]): Promise<void> {
    await Promise.all(
      grants.map(async (grant) => {
        try {
          await getExternalWorkflowHandle(callWorkflowId(grant.callId)).signal(slotGrantedSignal);
        } catch (error) {
          if (isCancellation(error)) throw error;
          log.warn('slot not delivered: the call workflow is gone; the slot goes to the next call', { callId: grant.callId, error: String(error) });
          const index = state.active.indexOf(grant); // not if the call released it meanwhile
          if (index >= 0) {
            state.active.splice(index, 1);
            grantFreeSlots();
          }
        }
      }),
    );
  }
}

/** Queued calls the keeper's details name. */
const SHOWN_IN_LINE = 5;

/** How often held slots are checked against their calls' workflows. */
const RECONCILE_EVERY_MS = 5 * 60_000;
/** Slots younger than this are left alone (an admitted call's workflow may be starting). */
const RECONCILE_MIN_AGE_MS = 60_000;

/** Oldest first, then by call id, so that two calls placed in the same millisecond keep one order. */
function queueOrder(a: EnqueueCall, b: EnqueueCall): number {
  return Date.parse(a.queuedAt) - Date.parse(b.queuedAt) || (a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0);
}

/**
 * Where `entry` goes in the ordered queue: a binary search, because a replay runs every
 * enqueue of the history again and a long queue must not make that quadratic.
 */
function insertionPoint(queue: EnqueueCall[], entry: EnqueueCall): number {
  let low = 0;
  let high = queue.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (queueOrder(queue[middle], entry) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function validEnqueue(call: EnqueueCall | undefined): call is EnqueueCall {
  return typeof call?.callId === 'string' && call.callId !== '' && typeof call.queuedAt === 'string' && !Number.isNaN(Date.parse(call.queuedAt));
}
