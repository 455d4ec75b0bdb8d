import { expect } from 'chai';
import { LedgerItem } from '../../../db/models/ledger-item';
import { Payment } from '../../../db/models/payment';
import { AuditEvent } from '../../../db/models/audit-event';
import { paymentSignature } from '../../../providers/payments/gateway';
import type { PaymentSimulator } from '../../../simulators/payments/simulator';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, oauthTokenFor, signUp, withJson } from '../../support/accounts';
import { PAYMENT_SIMULATOR_KEY_SECRET, payAtGateway, paymentStackPerSuite } from '../../support/payment-gateway';

type Headers = Record<string, string>;

/**
 * Top-ups end to end over HTTP: POST /billing/topup creates the order at the Razorpay
 * simulator (its real wire protocol), the simulated checkout pays it, and
 * POST /billing/payments/{id}/complete verifies the signature and credits once.
 */
describe('billing: top-ups and their completion', () => {
  let api: RunningApi;
  let gateway: PaymentSimulator;
  const stack = paymentStackPerSuite();
  before(() => ({ api, gateway } = stack));

  async function owner(): Promise<{ workspaceId: string; userId: string; headers: Headers }> {
    const signedUp = await activeOwner(api, { name: 'Asha Rao' });
    return { workspaceId: signedUp.workspaceId, userId: signedUp.userId, headers: { ...signedUp.auth, 'X-Workspace-ID': signedUp.workspaceId } };
  }
  const topup = (headers: Headers, body: unknown) => api.request('/api/v1/billing/topup', withJson('POST', body, headers));
  const started = async (headers: Headers, body: unknown) => {
    const res = await topup(headers, body);
    expect(res.status, await res.clone().text()).to.equal(201);
    return res.json();
  };
  const complete = (headers: Headers, paymentId: string, body: unknown) =>
    api.request(`/api/v1/billing/payments/${paymentId}/complete`, withJson('POST', body, headers));
  const balance = async (headers: Headers) => (await (await api.request('/api/v1/billing', { headers })).json()).credits_paise as number;
  const topupItems = (workspaceId: string) => LedgerItem.find({ workspace_id: workspaceId, kind: 'topup' }).lean();

  it('buys a pack: an order for value + GST at the gateway, then one topup item of value + bonus', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { pack_id: 'pack_1000' });
    expect(payment).to.include({
      status: 'created',
      pack_id: 'pack_1000',
      value_paise: 100_000,
      bonus_paise: 5_000,
      credits_paise: 105_000,
      total_paise: 118_000,
      tax_split: 'intra',
      cgst_paise: 9_000,
      sgst_paise: 9_000,
      igst_paise: 0,
      currency: 'INR',
      gateway: 'razorpay',
      created_by: 'Asha Rao',
      invoice_id: null,
      completed_at: null,
    });
    expect(payment.checkout).to.deep.equal({
      gateway: 'razorpay',
      key_id: 'rzp_test_simulator',
      order_id: payment.order_id,
      amount_paise: 118_000,
      currency: 'INR',
    });
    const order = gateway.orders.get(payment.order_id)!;
    expect(order).to.include({ amount: 118_000, currency: 'INR', receipt: payment.id, status: 'created' });
    expect(await balance(headers)).to.equal(50_000);

    const paid = await payAtGateway(gateway, payment.order_id);
    const res = await complete(headers, payment.id, paid);
    expect(res.status, await res.clone().text()).to.equal(200);
    const completed = await res.json();
    expect(completed).to.include({ id: payment.id, status: 'paid', gateway_payment_id: paid.gateway_payment_id });
    expect(completed.invoice_id).to.match(/^[0-9a-f]{32}$/);
    expect(completed.completed_at).to.match(/\+05:30$/);
    expect(await balance(headers)).to.equal(155_000);

    const ledger = await (await api.request('/api/v1/billing/ledger?limit=1', { headers })).json();
    expect(ledger.items[0]).to.include({
      kind: 'topup',
      amount_paise: 105_000,
      balance_after_paise: 155_000,
      payment_id: payment.id,
      by_name: 'Asha Rao',
      call_id: null,
    });
    const listed = await (await api.request('/api/v1/billing/payments', { headers })).json();
    expect(listed.map((p: { id: string }) => p.id)).to.deep.equal([payment.id]);
    expect(listed[0]).to.include({ status: 'paid' });
    const actions = (await AuditEvent.find({ workspace_id: workspaceId, action: /^billing\./ }).lean()).map((e) => e.action).sort();
    expect(actions).to.deep.equal(['billing.topup_completed', 'billing.topup_started']);
  });

  it('works before activation: a new owner sees credits, plan and packs, tops up, completes and downloads the invoice', async () => {
    // The contract: "Billing, limits and onboarding endpoints work before activation."
    const newcomer = await signUp(api, { name: 'Asha Rao' });
    const headers = { ...newcomer.auth, 'X-Workspace-ID': newcomer.workspaceId };
    const read = async (path: string) => {
      const res = await api.request(`/api/v1${path}`, { headers });
      expect(res.status, `${path}: ${await res.clone().text()}`).to.equal(200);
      return res;
    };
    expect(await (await read('/workspace')).json()).to.include({ status: 'onboarding' });
    expect(await (await read('/billing')).json()).to.include({ credits_paise: 50_000 });
    expect((await (await read('/billing/ledger')).json()).items[0]).to.include({ kind: 'grant', amount_paise: 50_000 });
    expect(await (await read('/billing/plan')).json()).to.include({ id: 'starter' });
    expect(await (await read('/billing/packs')).json()).to.have.length(5);
    expect(await (await read('/workspace/limits')).json()).to.be.an('object');

    const payment = await started(headers, { pack_id: 'pack_1000' });
    const res = await complete(headers, payment.id, await payAtGateway(gateway, payment.order_id));
    expect(res.status, await res.clone().text()).to.equal(200);
    const { invoice_id: invoiceId } = await res.json();
    expect(await balance(headers)).to.equal(155_000);
    expect((await (await read('/billing/payments')).json()).map((p: { id: string }) => p.id)).to.deep.equal([payment.id]);
    expect((await (await read('/billing/invoices')).json()).map((i: { id: string }) => i.id)).to.deep.equal([invoiceId]);
    const pdf = await read(`/billing/invoices/${invoiceId}/pdf`);
    expect(pdf.headers.get('content-type')).to.equal('application/pdf');
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).to.equal('%PDF-');
    // Everything else still waits for activation.
    const agents = await api.request('/api/v1/agents', { headers });
    expect(agents.status).to.equal(403);
    expect(await agents.json()).to.include({ code: 'workspace_inactive' });
  });

  it('credits a payment completed twice, or five times at once, exactly once, answering the same payment', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    const paid = await payAtGateway(gateway, payment.order_id);
    const first = await (await complete(headers, payment.id, paid)).json();
    const again = await complete(headers, payment.id, paid);
    expect(again.status).to.equal(200);
    expect(await again.json()).to.deep.equal(first);
    expect(await balance(headers)).to.equal(70_000);

    const racing = await started(headers, { amount_paise: 30_000 });
    const racingPaid = await payAtGateway(gateway, racing.order_id);
    const answers = await Promise.all(Array.from({ length: 5 }, () => complete(headers, racing.id, racingPaid)));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 200]);
    const bodies = await Promise.all(answers.map((a) => a.json()));
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).to.equal(1);
    expect(bodies[0]).to.include({ status: 'paid' });
    expect(await balance(headers)).to.equal(100_000);
    const items = await topupItems(workspaceId);
    expect(items.map((i) => i.payment_id).sort()).to.deep.equal([payment.id, racing.id].sort());
    const invoices = await (await api.request('/api/v1/billing/invoices', { headers })).json();
    expect(invoices).to.have.length(2);
  });

  it('refuses a signature that does not verify (another order, another key, tampered) and changes nothing', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { pack_id: 'pack_500' });
    const other = await started(headers, { pack_id: 'pack_500' });
    const paidOther = await payAtGateway(gateway, other.order_id);
    const attempts = [
      paidOther, // a genuine signature, of another order
      { gateway_payment_id: 'pay_forged000000', signature: paymentSignature(payment.order_id, 'pay_forged000000', 'not the key secret') },
      { gateway_payment_id: 'pay_forged000000', signature: paymentSignature(payment.order_id, 'pay_other0000000', PAYMENT_SIMULATOR_KEY_SECRET) },
    ];
    for (const attempt of attempts) {
      const res = await complete(headers, payment.id, attempt);
      expect(res.status, await res.clone().text()).to.equal(400);
      expect((await res.json()).detail).to.match(/signature does not verify/);
    }
    expect(await Payment.findById(payment.id).lean()).to.include({ status: 'created', gateway_payment_id: null, invoice_id: null });
    expect(await balance(headers)).to.equal(50_000);
    expect(await topupItems(workspaceId)).to.have.length(0);

    // A malformed signature is the body's fault: 422 at the field.
    const malformed = await complete(headers, payment.id, { gateway_payment_id: 'pay_x', signature: 'zz' });
    expect(malformed.status).to.equal(422);
    expect((await malformed.json()).detail[0].loc).to.deep.equal(['body', 'signature']);
    // And a paid payment stays paid whatever a bad completion says afterwards.
    const paid = await payAtGateway(gateway, payment.order_id);
    expect((await complete(headers, payment.id, paid)).status).to.equal(200);
    expect((await complete(headers, payment.id, { ...paid, signature: paidOther.signature })).status).to.equal(400);
    expect(await balance(headers)).to.equal(100_000);
  });

  it('lets only the owner, in a session, start a top-up or complete one', async () => {
    const { workspaceId, userId, headers } = await owner();
    const key = await apiKeyFor(workspaceId);
    const keyed = await topup(key.headers, { pack_id: 'pack_500' });
    expect(keyed.status).to.equal(403);
    expect((await keyed.json()).detail).to.match(/API keys cannot use this endpoint/);
    const app = await oauthTokenFor(workspaceId, userId);
    expect((await topup(app.headers, { pack_id: 'pack_500' })).status).to.equal(403);
    const admin = await memberWithRole(api, workspaceId, 'admin');
    const byAdmin = await topup(admin.headers, { pack_id: 'pack_500' });
    expect(byAdmin.status).to.equal(403);
    expect(await byAdmin.json()).to.include({ permission: 'billing.manage' });

    const payment = await started(headers, { pack_id: 'pack_500' });
    const paid = await payAtGateway(gateway, payment.order_id);
    expect((await complete(key.headers, payment.id, paid)).status).to.equal(403);
    expect((await complete(admin.headers, payment.id, paid)).status).to.equal(403);
    // Another workspace's owner cannot complete it either (404: not in their workspace).
    const stranger = await owner();
    expect((await complete(stranger.headers, payment.id, paid)).status).to.equal(404);
    expect(await balance(headers)).to.equal(50_000);
    // Admins and keys read payments; their list is the last 100.
    expect((await api.request('/api/v1/billing/payments', { headers: admin.headers })).status).to.equal(200);
    expect((await api.request('/api/v1/billing/payments', { headers: key.headers })).status).to.equal(200);
  });

  it('validates the body: one of pack_id and amount_paise, a known pack, ₹100 to ₹5,00,000', async () => {
    const { headers } = await owner();
    const refused = async (body: unknown, loc: (string | number)[]) => {
      const res = await topup(headers, body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect((await res.json()).detail.map((d: { loc: unknown }) => d.loc)).to.deep.include(loc);
    };
    await refused({}, ['body']);
    await refused({ pack_id: 'pack_500', amount_paise: 20_000 }, ['body']);
    await refused({ pack_id: 'pack_7' }, ['body', 'pack_id']);
    await refused({ amount_paise: 9_999 }, ['body', 'amount_paise']);
    await refused({ amount_paise: 50_000_001 }, ['body', 'amount_paise']);
    await refused({ amount_paise: 10_000.5 }, ['body', 'amount_paise']);
    const smallest = await started(headers, { amount_paise: 10_000 });
    expect(smallest).to.include({ value_paise: 10_000, bonus_paise: 0, credits_paise: 10_000, total_paise: 11_800 });
    expect((await started(headers, { amount_paise: 50_000_000 })).total_paise).to.equal(59_000_000);
  });

  it('answers 502 and records nothing when the gateway fails or is not configured', async () => {
    const { workspaceId, headers } = await owner();
    gateway.mode = 'failing';
    try {
      const res = await topup(headers, { pack_id: 'pack_500' });
      expect(res.status).to.equal(502);
      expect((await res.json()).detail).to.match(/payment gateway provider did not answer/);
    } finally {
      gateway.mode = 'normal';
    }
    expect(await Payment.countDocuments({ workspace_id: workspaceId })).to.equal(0);

    const bare = await startApi();
    try {
      const res = await bare.request('/api/v1/billing/topup', withJson('POST', { pack_id: 'pack_500' }, headers));
      expect(res.status).to.equal(502);
      expect((await res.json()).detail).to.match(/not configured/);
    } finally {
      await bare.close();
    }
  });
});
