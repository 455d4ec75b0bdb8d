import { expect } from 'chai';
import { Workspace } from '../../../db/models/workspace';
import { appendLedgerItem, balanceOf } from '../../../domain/billing/ledger';
import type { CalleeScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';
import { batchesClient, createdBatch, type Batch, type Contact } from './helpers';

/** Calling hours open all day, so that queued calls are dialled at once. */
const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
/** The simulator plays callees' scripts 20 times faster: 20 simulated seconds take 1 s. */
const TIME_SCALE = 0.05;
const FINAL_BATCH = ['completed', 'canceled'];

type Call = Record<string, unknown> & { id: string; status: string; to_number: string };

/**
 * Batches run for real: the batch workflow queues its contacts' calls through the workspace's
 * queue and slot keeper, the worker dials the telephony simulator, whose scripted callees
 * answer, ring out or are busy, and their callbacks end the calls that settle the contacts.
 * Real API, workers, media service, FerretDB and Temporal.
 */
describe('Batches running: calls through the queue and limits, retries, pause, resume, cancel, start time', function () {
  this.timeout(240_000);
  let providers: TestProviders;
  let api: RunningApi;

  /** A fresh callee number that plays `script` when dialled. */
  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9199'));
    providers.telephony.setCallee(number, script);
    return number;
  };
  const answers = (): CalleeScript => ({ kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 20 });
  const dialled = (to: string): SimulatedCall[] => providers.telephony.calls().filter((c) => c.to === to);

  /** A workspace with its own limit and agent, and the helpers that act in it. */
  async function workspace(limit: number) {
    const owner: SignedUp = await activeOwner(api, { name: 'Asha Rao' });
    await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { concurrency_limit: limit } });
    const agentId: string = (await agentsClient(api, owner.auth).created({ name: 'Dialler', call: OPEN_HOURS })).id;
    const batches = batchesClient(api, owner.auth);
    const from = await providers.callerFor(owner.workspaceId);
    const csvOf = (numbers: string[]) => ['number,name', ...numbers.map((n, i) => `${n},Person ${i}`)].join('\n');
    return {
      owner,
      from,
      batches,
      create: async (numbers: string[], fields: Record<string, string> = {}) =>
        (await createdBatch(api, owner.auth, csvOf(numbers), { agent_id: agentId, from_number: from, ...fields })).batch,
      settled: (id: string, timeoutMs = 90_000): Promise<Batch> =>
        until(
          () => batches.get(id),
          (b) => FINAL_BATCH.includes(b.status) && b.counts.calling === 0,
          timeoutMs,
          250,
        ),
      contactsWhen: (id: string, done: (contacts: Contact[]) => boolean, timeoutMs = 60_000) => until(() => batches.allContacts(id), done, timeoutMs, 250),
      call: async (id: string): Promise<Call> => (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json(),
      place: async (to: string): Promise<Call> => {
        const res = await api.request('/api/v1/calls', withJson('POST', { agent_id: agentId, to_number: to, from_number: from }, owner.auth));
        expect(res.status, await res.clone().text()).to.equal(201);
        return res.json();
      },
      hangUp: (id: string) => api.request(`/api/v1/calls/${id}/hangup`, { method: 'POST', headers: owner.auth }),
    };
  }

  before(async () => {
    providers = await startTestProviders({ timeScale: TIME_SCALE });
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it("queues the contacts' calls in file order, never more live than the workspace's limit, and settles each contact", async () => {
    const ws = await workspace(2);
    const scripts: CalleeScript[] = [answers(), { kind: 'busy' }, answers(), { kind: 'failed' }, answers(), { kind: 'busy' }, answers()];
    const numbers = scripts.map(callee);
    const batch = await ws.create(numbers);
    expect(batch.status).to.equal('running');

    const done = await ws.settled(batch.id);
    expect(done.status).to.equal('completed');
    expect(done.counts).to.deep.equal({ pending: 0, calling: 0, 'retry-wait': 0, completed: 4, 'no-answer': 0, busy: 2, failed: 1, canceled: 0 });
    expect(done.started_at).to.be.a('string');
    expect(done.ended_at).to.be.a('string');

    const contacts = await ws.batches.allContacts(batch.id);
    expect(contacts.map((c) => [c.number, c.status, c.attempts])).to.deep.equal(
      numbers.map((n, i) => [n, ['completed', 'busy', 'completed', 'failed', 'completed', 'busy', 'completed'][i], 1]),
    );
    for (const [i, contact] of contacts.entries()) {
      const call = await ws.call(contact.latest_call_id!);
      // Each call is an ordinary call of the workspace, as POST /calls places one.
      expect(call).to.deep.include({
        to_number: contact.number,
        from_number: ws.from,
        direction: 'outbound',
        placed_by: 'Asha Rao',
        user_data: { name: `Person ${i}` },
        status: contact.status,
      });
    }
    const listed = await (await api.request('/api/v1/calls?limit=200', { headers: ws.owner.auth })).json();
    expect(listed.total).to.equal(numbers.length);

    // Queued in file order (the queue takes the oldest first), and never more than 2 live at once.
    const records = await Promise.all(contacts.map((c) => ws.call(c.latest_call_id!)));
    const queuedAt = records.map((r) => Date.parse(r.queued_at as string));
    expect(queuedAt).to.deep.equal([...queuedAt].sort((a, b) => a - b));
    expect(new Set(queuedAt).size).to.equal(numbers.length);
    const calls = numbers.flatMap(dialled);
    expect(calls).to.have.length(numbers.length);
    // From the dial request (a call that fails never rings) to the final status.
    const liveFrom = (c: SimulatedCall) => c.history[0].at.getTime();
    const liveTo = (c: SimulatedCall) => c.history[c.history.length - 1].at.getTime();
    const maxLive = Math.max(...calls.map((c) => calls.filter((o) => liveFrom(o) <= liveFrom(c) && liveTo(o) > liveFrom(c)).length));
    expect(maxLive).to.be.at.most(2);
    expect(maxLive).to.equal(2);
  });

  it('retries unanswered contacts (no-answer, busy, failed) after the spacing, up to the attempts allowed', async () => {
    const ws = await workspace(5);
    const neverAnswers = callee({ kind: 'no-answer', ringSeconds: 20 });
    const busyThenAnswers = callee({ kind: 'busy' });
    const answersAtOnce = callee(answers());
    const batch = await ws.create([neverAnswers, busyThenAnswers, answersAtOnce], { max_attempts: '3', retry_spacing_seconds: '2' });

    // After its busy first call the second contact waits for its retry; it answers the next one.
    const waiting = await ws.contactsWhen(batch.id, (list) => list[1].status === 'retry-wait');
    expect(waiting[1]).to.deep.include({ attempts: 1 });
    expect(Date.parse(waiting[1].next_attempt_at!)).to.be.greaterThan(Date.now() - 2_000);
    providers.telephony.setCallee(busyThenAnswers, answers());
    expect((await ws.batches.get(batch.id)).counts['retry-wait']).to.be.at.least(1);

    const done = await ws.settled(batch.id);
    expect(done.counts).to.deep.include({ completed: 2, 'no-answer': 1, 'retry-wait': 0, pending: 0 });
    const contacts = await ws.batches.allContacts(batch.id);
    expect(contacts.map((c) => [c.status, c.attempts, c.next_attempt_at])).to.deep.equal([
      ['no-answer', 3, null],
      ['completed', 2, null],
      ['completed', 1, null],
    ]);
    expect(dialled(neverAnswers)).to.have.length(3);
    expect(dialled(busyThenAnswers)).to.have.length(2);
    expect(dialled(answersAtOnce)).to.have.length(1);

    // Each retry was queued at least the spacing after the call before it ended.
    const listed = await (await api.request(`/api/v1/calls?number=${encodeURIComponent(neverAnswers)}`, { headers: ws.owner.auth })).json();
    const attempts = (listed.items as Call[]).reverse();
    expect(attempts.map((c) => c.status)).to.deep.equal(['no-answer', 'no-answer', 'no-answer']);
    expect(contacts[0].latest_call_id).to.equal(attempts[2].id);
    for (let i = 1; i < attempts.length; i++) {
      expect(Date.parse(attempts[i].queued_at as string) - Date.parse(attempts[i - 1].ended_at as string), `attempt ${i + 1}`).to.be.at.least(1_900);
    }
  });

  it('pause holds back new calls (a queued one goes on), resume goes on; a finished batch cannot be paused', async () => {
    const ws = await workspace(1);
    // A long call holds the only slot, so that the batch's first call waits in the queue.
    const blocker = await ws.place(callee({ kind: 'answer', answerAfterSeconds: 1 }));
    await until(
      () => ws.call(blocker.id),
      (c) => c.status === 'in-progress',
    );
    const numbers = [callee(answers()), callee(answers())];
    const batch = await ws.create(numbers);
    await ws.contactsWhen(batch.id, (list) => list[0].status === 'calling');

    const paused = await ws.batches.control(batch.id, 'pause');
    expect(paused.status).to.equal(200);
    expect(await paused.json()).to.deep.include({ status: 'paused', status_reason: null });
    expect((await (await ws.batches.control(batch.id, 'pause')).json()).status).to.equal('paused');

    // The slot frees: the call already queued is dialled and ends; the next contact is not called.
    expect((await ws.hangUp(blocker.id)).status).to.equal(200);
    await ws.contactsWhen(batch.id, (list) => list[0].status === 'completed');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const held = await ws.batches.get(batch.id);
    expect(held).to.deep.include({ status: 'paused' });
    expect(held.counts).to.deep.include({ completed: 1, pending: 1, calling: 0 });
    expect(dialled(numbers[1])).to.have.length(0);

    const resumed = await ws.batches.control(batch.id, 'resume');
    expect(resumed.status).to.equal(200);
    expect((await resumed.json()).status).to.equal('running');
    const done = await ws.settled(batch.id);
    expect(done.status).to.equal('completed');
    expect(done.counts.completed).to.equal(2);
    for (const [action, done] of [
      ['pause', 'paused'],
      ['resume', 'resumed'],
      ['cancel', 'canceled'],
    ] as const) {
      const res = await ws.batches.control(batch.id, action);
      expect(res.status, action).to.equal(409);
      expect((await res.json()).detail).to.equal(`the batch is completed: it cannot be ${done}`);
    }
  });

  it("cancel hangs up the batch's queued calls and cancels the contacts not called yet", async () => {
    const ws = await workspace(1);
    const blocker = await ws.place(callee({ kind: 'answer', answerAfterSeconds: 1 }));
    await until(
      () => ws.call(blocker.id),
      (c) => c.status === 'in-progress',
    );
    const numbers = [callee(answers()), callee(answers()), callee(answers())];
    const batch = await ws.create(numbers, { max_attempts: '2', retry_spacing_seconds: '1' });
    const [first] = await ws.contactsWhen(batch.id, (list) => list[0].status === 'calling');

    const canceled = await ws.batches.control(batch.id, 'cancel');
    expect(canceled.status).to.equal(200);
    const body = await canceled.json();
    expect(body).to.deep.include({ status: 'canceled', status_reason: null });
    expect(body.ended_at).to.be.a('string');

    const call = await until(
      () => ws.call(first.latest_call_id!),
      (c) => c.status !== 'queued',
    );
    expect(call).to.deep.include({ status: 'canceled', hangup_by: 'Asha Rao', hangup_reason: 'canceled while queued' });
    const done = await ws.settled(batch.id);
    expect(done.counts).to.deep.equal({ pending: 0, calling: 0, 'retry-wait': 0, completed: 0, 'no-answer': 0, busy: 0, failed: 0, canceled: 3 });
    const contacts = await ws.batches.allContacts(batch.id);
    expect(contacts.map((c) => [c.status, c.attempts, c.latest_call_id])).to.deep.equal([
      ['canceled', 1, first.latest_call_id],
      ['canceled', 0, null],
      ['canceled', 0, null],
    ]);
    expect(numbers.flatMap(dialled)).to.have.length(0);
    expect((await ws.batches.control(batch.id, 'resume')).status).to.equal(409);
    expect((await ws.hangUp(blocker.id)).status).to.equal(200);
  });

  it('waits for its start time (scheduled), then runs', async () => {
    const ws = await workspace(5);
    const numbers = [callee(answers()), callee({ kind: 'busy' })];
    const startAt = new Date(Date.now() + 5_000);
    const batch = await ws.create(numbers, { start_at: startAt.toISOString() });
    expect(batch).to.deep.include({ status: 'scheduled', started_at: null });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await ws.batches.get(batch.id)).status).to.equal('scheduled');
    expect(numbers.flatMap(dialled)).to.have.length(0);

    const done = await ws.settled(batch.id);
    expect(done.counts).to.deep.include({ completed: 1, busy: 1 });
    expect(Date.parse(done.started_at as string)).to.be.at.least(startAt.getTime());
    const firstDial = Math.min(...numbers.flatMap(dialled).map((c) => c.history[0].at.getTime()));
    expect(firstDial).to.be.at.least(startAt.getTime());
  });

  it('pauses itself when credits run out, keeping the contact for later, and goes on when resumed', async () => {
    const ws = await workspace(5);
    const numbers = [callee(answers()), callee(answers())];
    const startAt = new Date(Date.now() + 3_000);
    const batch = await ws.create(numbers, { start_at: startAt.toISOString() });
    const balance = await balanceOf(ws.owner.workspaceId);
    await appendLedgerItem({
      workspaceId: ws.owner.workspaceId,
      kind: 'adjustment',
      amountPaise: -balance,
      idempotencyKey: `test-empty-${batch.id}`,
      at: new Date(),
    });

    const paused = await until(
      () => ws.batches.get(batch.id),
      (b) => b.status === 'paused',
      30_000,
      250,
    );
    expect(paused).to.deep.include({ status_reason: 'out of credits' });
    expect(paused.counts).to.deep.include({ pending: 2, calling: 0 });
    expect(numbers.flatMap(dialled)).to.have.length(0);

    await appendLedgerItem({
      workspaceId: ws.owner.workspaceId,
      kind: 'adjustment',
      amountPaise: balance,
      idempotencyKey: `test-refill-${batch.id}`,
      at: new Date(),
    });
    expect((await (await ws.batches.control(batch.id, 'resume')).json()).status).to.equal('running');
    const done = await ws.settled(batch.id);
    expect(done.counts.completed).to.equal(2);
  });
});
