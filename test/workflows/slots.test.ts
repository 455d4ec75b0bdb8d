import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities, systemClock } from '../../activities';
import { concurrencyLimitOf } from '../../domain/calls/concurrency-limit';
import { newId } from '../../db/ids';
import { Workspace } from '../../db/models/workspace';
import { Call } from '../../db/models/call';
import { appendLedgerItem } from '../../domain/billing/ledger';
import { admitLiveCall } from '../../domain/calls/admit-live-call';
import { callWorkflowId } from '../../contracts/calls';
import { enqueueSignal, releaseSignal, setLimitSignal, slotKeeperId, slotsStateQuery, tryAcquireUpdate, type SlotKeeperState } from '../../contracts/slots';
import { TASK_QUEUES } from '../../contracts/task-queues';
import type { slotKeeperWorkflow } from '../../workflows/slots';
import { slotProbeDoneSignal, slotProbeStateQuery, type slotProbeWorkflow } from '../../workflows/testing/slot-probe';
import { createLocal, timeSkippingWorker, workflowBundle } from '../support/servers';

type Probe = { callId: string; handle: WorkflowHandle<typeof slotProbeWorkflow> };

const ids = (calls: { callId: string }[]) => calls.map((call) => call.callId);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `ok` holds (workflow tasks are asynchronous); fails with the last value seen. */
async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string, waitMs = 10_000): Promise<T> {
  let value = await read();
  for (const end = Date.now() + waitMs; !ok(value) && Date.now() < end;) {
    await sleep(50);
    value = await read();
  }
  expect(ok(value), `${what}; last seen: ${JSON.stringify(value)}`).to.equal(true);
  return value;
}

/**
 * The per-workspace slot keeper with real call-side workflows: each queued call is a
 * slotProbeWorkflow under `call-<call_id>`, so a grant is observed where the call workflow
 * would receive it. A decision shows in the keeper's `state` at once (a granted call counts
 * as active from then on), so "nothing was granted" is read from there.
 */
describe('slotKeeperWorkflow under time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let stack: Awaited<ReturnType<typeof timeSkippingWorker>>;

  before(async () => {
    stack = await timeSkippingWorker(TASK_QUEUES.calls);
    env = stack.env;
  });
  after(() => stack.stop());

  async function workspace(options: { limit?: number | null; plan?: string } = {}): Promise<string> {
    const id = newId();
    const now = new Date();
    await Workspace.create({
      _id: id,
      name: 'Slots test',
      status: 'active',
      plan: options.plan ?? 'starter',
      concurrency_limit: options.limit ?? null,
      created_by: newId(),
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  const keeper = (workspaceId: string) => env.client.workflow.getHandle<typeof slotKeeperWorkflow>(slotKeeperId(workspaceId));
  const keeperState = (workspaceId: string) => keeper(workspaceId).query(slotsStateQuery);

  function startKeeper(workspaceId: string, carried?: SlotKeeperState) {
    return env.client.workflow.start<typeof slotKeeperWorkflow>('slotKeeperWorkflow', {
      workflowId: slotKeeperId(workspaceId),
      taskQueue: TASK_QUEUES.calls,
      args: [{ workspaceId, carried }],
    });
  }

  /** As a call joins the queue: signal-with-start, so the first call starts the keeper. */
  function enqueue(workspaceId: string, callId: string, queuedAt: string) {
    return env.client.workflow.signalWithStart<typeof slotKeeperWorkflow, [{ callId: string; queuedAt: string }]>('slotKeeperWorkflow', {
      workflowId: slotKeeperId(workspaceId),
      taskQueue: TASK_QUEUES.calls,
      args: [{ workspaceId }],
      signal: enqueueSignal,
      signalArgs: [{ callId, queuedAt }],
    });
  }

  async function probe(workspaceId: string, callId = `cal_${newId()}`): Promise<Probe> {
    const handle = await env.client.workflow.start<typeof slotProbeWorkflow>('slotProbeWorkflow', {
      workflowId: callWorkflowId(callId),
      taskQueue: TASK_QUEUES.calls,
      args: [{ workspaceId, callId }],
    });
    return { callId, handle };
  }

  const grantsOf = async (call: Probe) => (await call.handle.query(slotProbeStateQuery)).grantedAt.length;

  const stateWhere = (workspaceId: string, ok: (state: SlotKeeperState) => boolean, what: string) => eventually(() => keeperState(workspaceId), ok, what);
  const granted = (call: Probe, times = 1) =>
    eventually(
      () => grantsOf(call),
      (n) => n === times,
      `${call.callId} granted ${times} time(s)`,
    );
  const at = (base: number, offsetSeconds: number) => new Date(base + offsetSeconds * 1000).toISOString();

  it('reads the limit staff set, else the plan', async () => {
    const staffSet = await workspace({ limit: 7, plan: 'growth' });
    const planOnly = await workspace({ plan: 'growth' });
    expect(await concurrencyLimitOf(staffSet)).to.equal(7);
    expect(await concurrencyLimitOf(planOnly)).to.equal(20);
    await startKeeper(staffSet);
    await startKeeper(planOnly);
    await stateWhere(staffSet, (s) => s.limit === 7, 'limit of the staff-set workspace');
    await stateWhere(planOnly, (s) => s.limit === 20, 'limit of the growth plan');
    const missing = await concurrencyLimitOf(newId()).catch((err: unknown) => err);
    expect(missing).to.have.property('nonRetryable', true);
  });

  it('grants the oldest queued call first, by queuedAt and not by arrival', async () => {
    const ws = await workspace({ limit: 1 });
    const base = Date.now();
    const holder = await probe(ws);
    await enqueue(ws, holder.callId, at(base, 0));
    await granted(holder);
    const [late, early, middle] = [await probe(ws), await probe(ws), await probe(ws)];
    await enqueue(ws, late.callId, at(base, 30));
    await enqueue(ws, early.callId, at(base, 10));
    await enqueue(ws, middle.callId, at(base, 20));
    await stateWhere(ws, (s) => s.queue.length === 3, 'three queued');
    expect(ids((await keeperState(ws)).queue)).to.deep.equal([early.callId, middle.callId, late.callId]);

    for (const [done, next] of [
      [holder, early],
      [early, middle],
      [middle, late],
    ]) {
      await done.handle.signal(slotProbeDoneSignal);
      await granted(next);
      const state = await keeperState(ws);
      expect(ids(state.active), `after ${done.callId} ended`).to.deep.equal([next.callId]);
      expect(state.active[0].channel).to.equal('outbound');
    }
    expect(await grantsOf(holder)).to.equal(1);
  });

  it('frees, after a few minutes, a slot held by a call whose workflow is gone (terminated, never started)', async () => {
    const ws = await workspace({ limit: 1 });
    await startKeeper(ws);
    // Admitted, but its workflow never ran (as if terminated by an operator): the slot is held.
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [{ callId: 'cal_gone', channel: 'browser' }] })).to.deep.include({ granted: true });
    const waiting = await probe(ws);
    await enqueue(ws, waiting.callId, new Date().toISOString());
    expect(await grantsOf(waiting)).to.equal(0);
    // Five minutes on, the keeper finds no running workflow for cal_gone and gives the slot to the queued call.
    await env.sleep(6 * 60_000);
    await granted(waiting);
    expect(ids((await keeperState(ws)).active)).to.deep.equal([waiting.callId]);
  });

  it('an admitted live call whose workflow cannot start: the request fails, its record ends failed, and the slot is free again', async () => {
    const ws = await workspace({ limit: 1 });
    await appendLedgerItem({ workspaceId: ws, kind: 'grant', amountPaise: 10_000, idempotencyKey: `grant:${ws}`, at: new Date(), note: 'test credits' });
    // A workflow already runs under the call's id, so the call's own workflow cannot start.
    const occupied = await probe(ws);
    const admission = admitLiveCall(env.client, () => new Date(), {
      workspaceId: ws,
      agent: { _id: newId(), name: 'Unstartable', status: 'active' },
      channel: 'browser',
      toNumber: '',
      fromNumber: '',
      userData: {},
      placedBy: 'Asha Rao',
      callId: occupied.callId,
    });
    await admission.then(
      () => expect.fail('the admission succeeded without its workflow'),
      (error: Error) => expect(error.name).to.equal('WorkflowExecutionAlreadyStartedError'),
    );
    expect(await Call.findById(occupied.callId).lean()).to.deep.include({ status: 'failed', hangup_by: 'system', hangup_reason: 'error' });
    await stateWhere(ws, (s) => s.active.length === 0, 'the slot given back');
    const waiting = await probe(ws);
    await enqueue(ws, waiting.callId, new Date().toISOString());
    await granted(waiting);
  });

  it('orders calls queued in the same millisecond by call id', async () => {
    const ws = await workspace({ limit: 0 });
    const same = new Date().toISOString();
    await enqueue(ws, 'cal_b', same);
    await enqueue(ws, 'cal_c', same);
    await enqueue(ws, 'cal_a', same);
    const state = await stateWhere(ws, (s) => s.queue.length === 3, 'three queued');
    expect(ids(state.queue)).to.deep.equal(['cal_a', 'cal_b', 'cal_c']);
  });

  it('never has more than the limit active across outbound grants and inbound or browser calls', async () => {
    const ws = await workspace({ limit: 3 });
    const base = Date.now();
    await startKeeper(ws);
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [{ callId: 'cal_in1', channel: 'inbound' }] })).to.deep.equal({
      granted: true,
      limit: 3,
      active: 1,
    });
    const outbound = [await probe(ws), await probe(ws), await probe(ws)];
    for (const [i, call] of outbound.entries()) await enqueue(ws, call.callId, at(base, i));
    await granted(outbound[0]);
    await granted(outbound[1]);
    let state = await stateWhere(ws, (s) => s.queue.length === 1, 'the third outbound call queued');
    expect(ids(state.active)).to.deep.equal(['cal_in1', outbound[0].callId, outbound[1].callId]);

    // At the limit a browser call is refused, and asked again, refused again.
    const browser = { callId: 'cal_web1', channel: 'browser' as const };
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [browser] })).to.deep.equal({ granted: false, limit: 3, active: 3 });
    // The inbound call ends: the queued outbound call, which waited, takes its slot.
    await keeper(ws).signal(releaseSignal, { callId: 'cal_in1' });
    await granted(outbound[2]);
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [browser] })).to.deep.equal({ granted: false, limit: 3, active: 3 });
    // An outbound call ends with nobody queued: the browser call gets the slot, and asking again is no second slot.
    await outbound[0].handle.signal(slotProbeDoneSignal);
    await stateWhere(ws, (s) => s.active.length === 2, 'the first outbound call released');
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [browser] })).to.deep.equal({ granted: true, limit: 3, active: 3 });
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [browser] })).to.deep.equal({ granted: true, limit: 3, active: 3 });
    state = await keeperState(ws);
    expect(state.active.map((call) => [call.callId, call.channel])).to.deep.equal([
      [outbound[1].callId, 'outbound'],
      [outbound[2].callId, 'outbound'],
      ['cal_web1', 'browser'],
    ]);
    for (const call of outbound) expect(await grantsOf(call)).to.equal(1);

    // Twelve asks at once for one free slot: exactly one gets it.
    await keeper(ws).signal(releaseSignal, { callId: 'cal_web1' });
    await stateWhere(ws, (s) => s.active.length === 2, 'the browser call released');
    const asks = await Promise.all(
      Array.from({ length: 12 }, (_, i) => keeper(ws).executeUpdate(tryAcquireUpdate, { args: [{ callId: `cal_rush${i}`, channel: 'inbound' }] })),
    );
    expect(asks.filter((answer) => answer.granted)).to.have.length(1);
    expect((await keeperState(ws)).active).to.have.length(3);
  });

  it('refuses a malformed tryAcquire without touching the state', async () => {
    const ws = await workspace({ limit: 2 });
    await startKeeper(ws);
    const refused = await keeper(ws)
      .executeUpdate(tryAcquireUpdate, { args: [{ callId: 'cal_x', channel: 'outbound' as 'inbound' }] })
      .catch((err: unknown) => err);
    expect(String((refused as Error).cause ?? refused)).to.match(/inbound and browser/);
    expect((await keeperState(ws)).active).to.deep.equal([]);
  });

  it('takes a released queued call out of the queue, and gives a released slot to the next queued call', async () => {
    const ws = await workspace({ limit: 1 });
    const base = Date.now();
    const [holder, first, second] = [await probe(ws), await probe(ws), await probe(ws)];
    await enqueue(ws, holder.callId, at(base, 0));
    await enqueue(ws, first.callId, at(base, 1));
    await enqueue(ws, second.callId, at(base, 2));
    await granted(holder);
    // The first queued call hangs up while queued: it leaves the queue and is never granted.
    await first.handle.signal(slotProbeDoneSignal);
    await stateWhere(ws, (s) => s.queue.length === 1, 'the hung-up call out of the queue');
    expect(ids((await keeperState(ws)).queue)).to.deep.equal([second.callId]);
    await holder.handle.signal(slotProbeDoneSignal);
    await granted(second);
    expect(ids((await keeperState(ws)).active)).to.deep.equal([second.callId]);
    expect(await grantsOf(first)).to.equal(0);
  });

  it('ignores a repeated enqueue or release', async () => {
    const ws = await workspace({ limit: 1 });
    const base = Date.now();
    const [holder, waiting] = [await probe(ws), await probe(ws)];
    await enqueue(ws, holder.callId, at(base, 0));
    await granted(holder);
    await enqueue(ws, waiting.callId, at(base, 5));
    // Repeats: of the queued call (even with another time), and of the active one.
    await enqueue(ws, waiting.callId, at(base, -100));
    await enqueue(ws, holder.callId, at(base, 0));
    await keeper(ws).signal(releaseSignal, { callId: 'cal_never_seen' });
    let state = await keeperState(ws);
    expect(state.queue).to.deep.equal([{ callId: waiting.callId, queuedAt: at(base, 5) }]);
    expect(ids(state.active)).to.deep.equal([holder.callId]);

    await keeper(ws).signal(releaseSignal, { callId: holder.callId });
    await keeper(ws).signal(releaseSignal, { callId: holder.callId });
    await granted(waiting);
    state = await keeperState(ws);
    expect(ids(state.active)).to.deep.equal([waiting.callId]);
    expect(state.queue).to.deep.equal([]);
    expect(await grantsOf(holder)).to.equal(1);
    // Malformed signals change nothing.
    await keeper(ws).signal(enqueueSignal, { callId: 'cal_bad', queuedAt: 'yesterday' });
    await keeper(ws).signal(setLimitSignal, { limit: -1 });
    await keeper(ws).signal(setLimitSignal, { limit: 1.5 });
    state = await keeperState(ws);
    expect(state).to.deep.include({ limit: 1, queue: [] });
    expect(ids(state.active)).to.deep.equal([waiting.callId]);
  });

  it('grants waiting calls at once when the limit goes up, and evicts nobody when it goes down', async () => {
    const ws = await workspace({ limit: 1 });
    const base = Date.now();
    const calls = [await probe(ws), await probe(ws), await probe(ws), await probe(ws)];
    for (const [i, call] of calls.entries()) await enqueue(ws, call.callId, at(base, i));
    await granted(calls[0]);
    await stateWhere(ws, (s) => s.queue.length === 3, 'three queued');

    await keeper(ws).signal(setLimitSignal, { limit: 3 });
    await granted(calls[1]);
    await granted(calls[2]);
    let state = await keeperState(ws);
    expect(state.limit).to.equal(3);
    expect(ids(state.active)).to.deep.equal(ids(calls.slice(0, 3)));
    expect(ids(state.queue)).to.deep.equal([calls[3].callId]);

    await keeper(ws).signal(setLimitSignal, { limit: 1 });
    state = await stateWhere(ws, (s) => s.limit === 1, 'the lower limit applied');
    expect(ids(state.active)).to.deep.equal(ids(calls.slice(0, 3)));
    // Two calls end: one active remains, which is the limit, so the queued call still waits.
    await calls[0].handle.signal(slotProbeDoneSignal);
    await calls[1].handle.signal(slotProbeDoneSignal);
    state = await stateWhere(ws, (s) => s.active.length === 1, 'two calls released');
    expect(ids(state.queue)).to.deep.equal([calls[3].callId]);
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [{ callId: 'cal_in', channel: 'inbound' }] })).to.deep.include({ granted: false });
    await calls[2].handle.signal(slotProbeDoneSignal);
    await granted(calls[3]);
    expect(ids((await keeperState(ws)).active)).to.deep.equal([calls[3].callId]);
  });

  it('gives the slot to the next call when the granted call workflow is gone', async () => {
    const ws = await workspace({ limit: 1 });
    const base = Date.now();
    const holder = await probe(ws);
    await enqueue(ws, holder.callId, at(base, 0));
    await granted(holder);
    const closed = await probe(ws);
    const alive = await probe(ws);
    await enqueue(ws, 'cal_never_started', at(base, 1));
    await enqueue(ws, closed.callId, at(base, 2));
    await enqueue(ws, alive.callId, at(base, 3));
    await closed.handle.terminate('the call workflow ended without releasing');
    await stateWhere(ws, (s) => s.queue.length === 3, 'three queued');

    await holder.handle.signal(slotProbeDoneSignal);
    await granted(alive);
    const state = await stateWhere(ws, (s) => s.queue.length === 0, 'the queue drained');
    expect(ids(state.active)).to.deep.equal([alive.callId]);
  });

  it('resumes carried state exactly, without reading the limit again', async () => {
    const ws = await workspace({ limit: 9 });
    const since = new Date(Date.now() - 60_000).toISOString();
    const full: SlotKeeperState = {
      workspaceId: ws,
      limit: 2,
      active: [
        { callId: 'cal_in', channel: 'inbound', since },
        { callId: 'cal_out', channel: 'outbound', since },
      ],
      queue: [
        { callId: 'cal_q2', queuedAt: since },
        { callId: 'cal_q1', queuedAt: new Date().toISOString() },
      ],
    };
    await startKeeper(ws, full);
    expect(await keeperState(ws)).to.deep.equal(full);
    expect(await keeper(ws).executeUpdate(tryAcquireUpdate, { args: [{ callId: 'cal_web', channel: 'browser' }] })).to.deep.equal({
      granted: false,
      limit: 2,
      active: 2,
    });
    expect(await keeperState(ws)).to.deep.equal(full);

    // With a free slot carried over, the oldest carried call gets it at once.
    const other = await workspace({ limit: 9 });
    const next = await probe(other);
    await startKeeper(other, {
      workspaceId: other,
      limit: 2,
      active: [{ callId: 'cal_in', channel: 'inbound', since }],
      queue: [
        { callId: next.callId, queuedAt: since },
        { callId: 'cal_later', queuedAt: new Date().toISOString() },
      ],
    });
    await granted(next);
    const state = await keeperState(other);
    expect(state.limit).to.equal(2);
    expect(state.active.map((call) => [call.callId, call.channel])).to.deep.equal([
      ['cal_in', 'inbound'],
      [next.callId, 'outbound'],
    ]);
    expect(ids(state.queue)).to.deep.equal(['cal_later']);
  });
});

/**
 * A real continue-as-new: the dev server suggests it after about 4,000 history events, so a
 * keeper at limit 0 is flooded with enqueues (and some releases) and must come out the other
 * side with every one of them, in order, while messages keep arriving across the switch.
 */
describe('slotKeeperWorkflow continuing as new on the dev server', function () {
  this.timeout(180_000);

  it('carries the queue across continue-as-new without losing a signal', async () => {
    const env = createLocal();
    const taskQueue = `calls-test-${randomBytes(4).toString('hex')}`;
    const ws = newId();
    const now = new Date();
    await Workspace.create({ _id: ws, name: 'Flood test', status: 'active', concurrency_limit: 0, created_by: newId(), created_at: now, updated_at: now });
    const handle = await env.client.workflow.start<typeof slotKeeperWorkflow>('slotKeeperWorkflow', {
      workflowId: slotKeeperId(ws),
      taskQueue,
      args: [{ workspaceId: ws }],
    });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities({ clock: systemClock }),
    });

    const total = 4_600;
    const base = now.getTime();
    // Placed at shuffled times: the queue must sort them back.
    const calls = Array.from({ length: total }, (_, i) => ({
      callId: `cal_${String(i).padStart(5, '0')}`,
      queuedAt: new Date(base + ((i * 7919) % total) * 1000).toISOString(),
    }));
    const hungUp = new Set(calls.filter((_, i) => i % 10 === 3).map((call) => call.callId));
    await worker.runUntil(async () => {
      for (let i = 0; i < total; i += 20) {
        const batch = calls.slice(i, i + 20);
        await Promise.all(batch.map((call) => handle.signal(enqueueSignal, call)));
        // Each hang-up after its enqueue was accepted, as a call's release follows its enqueue.
        await Promise.all(batch.filter((call) => hungUp.has(call.callId)).map((call) => handle.signal(releaseSignal, { callId: call.callId })));
      }
      const expected = calls.filter((call) => !hungUp.has(call.callId)).sort((a, b) => a.queuedAt.localeCompare(b.queuedAt));
      // Under a flood the server fails workflow tasks to flush the signals buffered meanwhile: the keeper catches up after.
      let state = await eventually(
        () => handle.query(slotsStateQuery),
        (s) => s.limit !== null && s.queue.length === expected.length,
        'the keeper caught up',
        60_000,
      );
      expect(state.queue).to.deep.equal(expected);
      expect(state).to.deep.include({ limit: 0, active: [] });
      await eventually(
        async () => (await handle.describe()).runId,
        (runId) => runId !== handle.firstExecutionRunId,
        'the keeper continued as new',
      );

      // The new run goes on from the carried queue.
      await handle.signal(enqueueSignal, { callId: 'cal_first', queuedAt: new Date(base - 1000).toISOString() });
      await handle.signal(releaseSignal, { callId: calls[0].callId });
      state = await eventually(
        () => handle.query(slotsStateQuery),
        (s) => s.queue[0]?.callId === 'cal_first',
        'the new run took the enqueue',
      );
      expect(ids(state.queue)).to.deep.equal(['cal_first', ...ids(expected.filter((call) => call.callId !== calls[0].callId))]);
    });
    await handle.terminate('test over');
  });
});
