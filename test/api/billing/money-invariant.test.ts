import { fork } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { adjustCredits } from '../../../domain/billing/adjustments';
import { callCost, chargeLedgerForCall } from '../../../domain/calls/charging';
import { newId } from '../../../db/ids';
import { AuditEvent } from '../../../db/models/audit-event';
import { LedgerItem } from '../../../db/models/ledger-item';
import type { PaymentSimulator } from '../../../simulators/payments/simulator';
import { balanceOf } from '../../../domain/billing/ledger';
import type { RunningApi } from '../../support/api';
import { activeOwner, withJson } from '../../support/accounts';
import { payAtGateway, paymentStackPerSuite } from '../../support/payment-gateway';
import { testServers } from '../../support/servers';

type Headers = Record<string, string>;

/**
 * The money invariant with every kind of writer at once: calls ending (the charge the call
 * workflow's activity makes, each retried), top-ups completed over HTTP (each twice), staff
 * adjustments (each run twice with its reference) and, in two other processes, the same call
 * charges again. Afterwards the ledger must be one unbroken chain whose sum is the balance,
 * with every change applied exactly once.
 */
describe('billing: the money invariant under concurrent writers', function () {
  this.timeout(180_000);
  let api: RunningApi;
  let gateway: PaymentSimulator;
  const stack = paymentStackPerSuite();
  before(() => ({ api, gateway } = stack));

  async function startedTopup(headers: Headers, amountPaise: number) {
    const res = await api.request('/api/v1/billing/topup', withJson('POST', { amount_paise: amountPaise }, headers));
    expect(res.status, await res.clone().text()).to.equal(201);
    const payment = await res.json();
    return { id: payment.id as string, credits: payment.credits_paise as number, completion: await payAtGateway(gateway, payment.order_id) };
  }

  it('keeps sum = balance, each balance_after from its predecessor, and applies nothing twice', async () => {
    const owner = await activeOwner(api);
    const ws = owner.workspaceId;
    const headers = { ...owner.auth, 'X-Workspace-ID': ws };

    const calls = Array.from({ length: 24 }, (_, i) => ({ callId: newId(), workspaceId: ws, durationSeconds: 7 + i * 3.5, endedAt: new Date().toISOString() }));
    const topups = await Promise.all([10_000, 12_345, 20_000, 31_000, 45_678, 99_999].map((amount) => startedTopup(headers, amount)));
    const adjustments = Array.from({ length: 8 }, (_, i) => ({ amountPaise: i % 2 ? -(i + 1) * 111 : (i + 1) * 250, reference: `ticket-${ws}-${i}` }));
    // Another process retrying some of the same charges, exactly as chargeLedgerForCall writes them.
    const crossProcess = calls
      .slice(0, 12)
      .map((c) => ({ workspaceId: ws, kind: 'call', amountPaise: -callCost(c.durationSeconds, 400), idempotencyKey: `call:${c.callId}`, callId: c.callId }));

    const complete = (t: (typeof topups)[number]) =>
      api.request(`/api/v1/billing/payments/${t.id}/complete`, withJson('POST', t.completion, headers)).then((r) => r.status);
    const [, , completions, codes] = await Promise.all([
      Promise.all(calls.flatMap((c) => [chargeLedgerForCall(c), chargeLedgerForCall(c)])),
      Promise.all(adjustments.flatMap((a) => [0, 1].map(() => adjustCredits({ workspaceId: ws, note: 'correction', by: 'ops', at: new Date(), ...a })))),
      Promise.all(topups.flatMap((t) => [complete(t), complete(t)])),
      Promise.all([runLedgerWriter(crossProcess), runLedgerWriter([...crossProcess].reverse())]),
    ]);
    expect(completions.every((status) => status === 200)).to.equal(true);
    expect(codes).to.deep.equal([0, 0]);

    const items = await LedgerItem.find({ workspace_id: ws }).sort({ seq: 1 }).lean();
    expect(items).to.have.length(1 + calls.length + topups.length + adjustments.length);
    expect(items.map((i) => i.seq)).to.deep.equal(items.map((_, i) => i + 1));
    items.forEach((item, i) => expect(item.balance_after_paise, `item ${item.seq}`).to.equal((i ? items[i - 1]!.balance_after_paise : 0) + item.amount_paise));
    expect(new Set(items.map((i) => i.idempotency_key)).size).to.equal(items.length);

    const expected =
      50_000 +
      topups.reduce((sum, t) => sum + t.credits, 0) +
      adjustments.reduce((sum, a) => sum + a.amountPaise, 0) -
      calls.reduce((sum, c) => sum + callCost(c.durationSeconds, 400), 0);
    const sum = items.reduce((total, i) => total + i.amount_paise, 0);
    expect(sum).to.equal(expected);
    expect(await balanceOf(ws)).to.equal(sum);
    expect((await (await api.request('/api/v1/billing', { headers })).json()).credits_paise).to.equal(sum);
    // Each change once, under its own name.
    expect(
      items
        .filter((i) => i.kind === 'call')
        .map((i) => i.call_id)
        .sort(),
    ).to.deep.equal(calls.map((c) => c.callId).sort());
    expect(
      items
        .filter((i) => i.kind === 'topup')
        .map((i) => i.payment_id)
        .sort(),
    ).to.deep.equal(topups.map((t) => t.id).sort());
    const adjusted = items.filter((i) => i.kind === 'adjustment');
    expect(adjusted).to.have.length(adjustments.length);
    const audited = await AuditEvent.find({ workspace_id: ws, action: 'billing.credits_adjusted' }).lean();
    expect(audited.map((e) => e.target?.id).sort()).to.deep.equal(adjusted.map((i) => i._id).sort());
    const ledger = await (await api.request('/api/v1/billing/ledger?limit=200', { headers })).json();
    expect(ledger.total).to.equal(items.length);
    expect(ledger.items[0].balance_after_paise).to.equal(sum);
  });
});

/** test/support/ledger-writer.ts in a process of its own; resolves its exit code. */
function runLedgerWriter(entries: unknown[]): Promise<number | null> {
  const child = fork(path.join(__dirname, '../../support/ledger-writer.ts'), [testServers().mongodbUri, JSON.stringify(entries)], {
    execArgv: ['--require', 'tsx/cjs'],
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}
