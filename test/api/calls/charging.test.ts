import { fork } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { Call } from '../../../db/models/call';
import { LedgerItem } from '../../../db/models/ledger-item';
import { Workspace } from '../../../db/models/workspace';
import { systemClock } from '../../../activities';
import { callCapOf, callCost } from '../../../domain/calls/charging';
import { createCallStepActivities } from '../../../activities/calls/steps';
import { appendLedgerItem, balanceOf } from '../../../domain/billing/ledger';
import { createLocal, testServers } from '../../support/servers';

/** Billing rules 1 and 4 and the ledger under concurrent writers, on the real database. */
describe('charging calls', function () {
  this.timeout(120_000);
  // The step the call workflow runs at a connected call's end: the charge, the closed record, `call.ended`.
  const closeCall: ReturnType<typeof createCallStepActivities>['closeCall'] = (input) =>
    createCallStepActivities({ clock: systemClock, temporal: createLocal().client }).closeCall(input);

  async function workspace(plan = 'starter', creditsPaise = 50_000): Promise<string> {
    const id = newId();
    const now = new Date();
    await Workspace.create({ _id: id, name: 'Charging test', status: 'active', plan, created_by: newId(), created_at: now, updated_at: now });
    if (creditsPaise) await appendLedgerItem({ workspaceId: id, kind: 'grant', amountPaise: creditsPaise, idempotencyKey: `grant:${id}`, at: now });
    return id;
  }

  it('costs ceil(duration_seconds * price_per_minute_paise / 60), never a paisa more from float noise', () => {
    expect(callCost(60, 400)).to.equal(400);
    expect(callCost(61, 400)).to.equal(407); // 406.67
    expect(callCost(0.1, 400)).to.equal(1); // 0.67
    expect(callCost(0, 400)).to.equal(0);
    expect(callCost(90.5, 350)).to.equal(528); // 527.92
    expect(callCost(0.3, 300)).to.equal(2); // 1.5 (0.3 * 300 is 90.00000000000001 in floating point)
    expect(callCost(6, 300)).to.equal(30); // exactly 30, not 31
    expect(callCost(9.3, 400)).to.equal(62); // exactly 62 (9.3 * 400 / 60 is 62.00000000000001 in floating point)
  });

  it('charges a call once: one `call` item keyed by the call id, the cost saved on the call, a retry changes nothing', async () => {
    const ws = await workspace();
    const callId = newId();
    const now = new Date();
    await Call.create({
      _id: callId,
      workspace_id: ws,
      agent_id: newId(),
      agent_name: 'A',
      direction: 'outbound',
      to_number: '+919800000001',
      from_number: '+918000000001',
      status: 'completed',
      created_at: now,
      updated_at: now,
    });
    const close = () =>
      closeCall({
        callId,
        workspaceId: ws,
        durationSeconds: 61,
        endedAt: now.toISOString(),
        changes: { status: 'completed', ended_at: now.toISOString(), duration_seconds: 61 },
        event: {
          workspaceId: ws,
          callId,
          agentId: '',
          sequence: 1_000_000,
          type: 'call.ended',
          message: 'ended by caller: the caller hung up',
          level: 'info',
          latencyMs: null,
          data: {},
          createdAt: now.toISOString(),
        },
      });
    const first = await close();
    const again = await close();
    expect(first).to.deep.equal({ costPaise: 407 });
    expect(again).to.deep.equal(first);
    const items = await LedgerItem.find({ call_id: callId }).lean();
    expect(items.map((i) => [i.kind, i.amount_paise, i.balance_after_paise])).to.deep.equal([['call', -407, 49_593]]);
    expect((await Call.findById(callId).lean())?.cost_paise).to.equal(407);
    expect(await balanceOf(ws)).to.equal(49_593);
  });

  it('caps a call at what the balance pays for when it is less than max_duration_seconds', async () => {
    expect(await callCapOf(await workspace('starter', 400), 600)).to.deep.equal({ capSeconds: 60, capReason: 'credits ran out' });
    expect(await callCapOf(await workspace('scale', 100_000), 600)).to.deep.equal({ capSeconds: 600, capReason: 'max duration reached' });
    expect(await callCapOf(await workspace('starter', 0), 600)).to.deep.equal({ capSeconds: 0, capReason: 'credits ran out' });
  });

  it('keeps the ledger whole under concurrent writers: every change once, a gapless sequence, each balance from its predecessor', async () => {
    const ws = await workspace('starter', 10_000);
    const changes = Array.from({ length: 24 }, (_, i) => ({ key: `test:${ws}:${i}`, amount: i % 3 === 0 ? 500 : -(i * 7 + 1) }));
    // Every change written by two writers at once (an activity and its retry), all at the same time.
    await Promise.all(
      changes.flatMap((c) =>
        [0, 1].map(() =>
          appendLedgerItem({ workspaceId: ws, kind: c.amount > 0 ? 'topup' : 'call', amountPaise: c.amount, idempotencyKey: c.key, at: new Date() }),
        ),
      ),
    );
    const items = await LedgerItem.find({ workspace_id: ws }).sort({ seq: 1 }).lean();
    expect(items).to.have.length(changes.length + 1);
    expect(new Set(items.map((i) => i.idempotency_key)).size).to.equal(items.length);
    items.forEach((item, index) => {
      expect(item.seq).to.equal(index + 1);
      const before = index === 0 ? 0 : items[index - 1]!.balance_after_paise;
      expect(item.balance_after_paise).to.equal(before + item.amount_paise);
    });
    const sum = items.reduce((total, item) => total + item.amount_paise, 0);
    expect(await balanceOf(ws)).to.equal(sum);
    expect(sum).to.equal(10_000 + changes.reduce((total, c) => total + c.amount, 0));
  });

  it('keeps the ledger whole when three processes write at once (each queues its own appends, the unique sequence decides between them)', async () => {
    const ws = await workspace('starter', 10_000);
    const changes = Array.from({ length: 30 }, (_, i) => ({ workspaceId: ws, kind: 'call', amountPaise: -(i + 1), idempotencyKey: `proc:${ws}:${i}` }));
    // Each process writes every change: the same change from two processes must apply once.
    const writers = [0, 1, 2].map((shift) => [...changes.slice(shift * 10), ...changes.slice(0, shift * 10)]);
    const codes = await Promise.all(writers.map((entries) => runLedgerWriter(entries)));
    expect(codes).to.deep.equal([0, 0, 0]);

    const items = await LedgerItem.find({ workspace_id: ws }).sort({ seq: 1 }).lean();
    expect(items.map((item) => item.seq)).to.deep.equal(Array.from({ length: changes.length + 1 }, (_, i) => i + 1));
    items.forEach((item, index) => expect(item.balance_after_paise).to.equal((index === 0 ? 0 : items[index - 1]!.balance_after_paise) + item.amount_paise));
    expect(await balanceOf(ws)).to.equal(10_000 - (30 * 31) / 2);
  });
});

/** Runs test/support/ledger-writer.ts in a process of its own; resolves its exit code. */
function runLedgerWriter(entries: unknown[]): Promise<number | null> {
  const child = fork(path.join(__dirname, '../../support/ledger-writer.ts'), [testServers().mongodbUri, JSON.stringify(entries)], {
    execArgv: ['--require', 'tsx/cjs'],
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}
