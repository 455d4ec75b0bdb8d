import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { Invoice } from '../../../db/models/invoice';
import { LedgerItem } from '../../../db/models/ledger-item';
import { Payment } from '../../../db/models/payment';
import type { PaymentSimulator } from '../../../simulators/payments/simulator';
import type { RunningApi } from '../../support/api';
import { startApi } from '../../support/api';
import { withJson } from '../../support/accounts';
import {
  PAYMENT_SIMULATOR_WEBHOOK_SECRET,
  payAtGateway,
  paymentOwner,
  paymentStackPerSuite,
  startedTopup,
  startPaymentGateway,
} from '../../support/payment-gateway';

type Headers = Record<string, string>;

/**
 * Razorpay's webhook over HTTP (docs/decisions/0185): the simulator, written from Razorpay's
 * docs, signs and posts `payment.captured` and `order.paid` to the API's webhook URL when the
 * customer pays, as a dashboard webhook would; the API, FerretDB and the page's own completion
 * are the real ones. The order checks' workflows are not run here (no billing worker).
 */
describe('billing: the payment gateway webhook completes paid orders', () => {
  let api: RunningApi;
  let gateway: PaymentSimulator;
  const stack = paymentStackPerSuite({ webhooks: true });
  before(() => ({ api, gateway } = stack));

  const webhookUrl = () => `${api.baseUrl}/api/v1/billing/razorpay/webhook`;
  const owner = () => paymentOwner(api);
  const started = (headers: Headers, body: unknown) => startedTopup(api, headers, body);
  const complete = (headers: Headers, paymentId: string, body: unknown) =>
    api.request(`/api/v1/billing/payments/${paymentId}/complete`, withJson('POST', body, headers));
  const balance = async (headers: Headers) => (await (await api.request('/api/v1/billing', { headers })).json()).credits_paise as number;
  /** What a payment left behind: its ledger items, invoices and completion audit events. */
  const traces = async (workspaceId: string, paymentId: string) => ({
    credits: await LedgerItem.countDocuments({ workspace_id: workspaceId, kind: 'topup', payment_id: paymentId }),
    invoices: await Invoice.countDocuments({ workspace_id: workspaceId, payment_id: paymentId }),
    audits: await AuditEvent.countDocuments({ workspace_id: workspaceId, action: 'billing.topup_completed' }),
  });
  const post = (body: string, headers: Headers) => fetch(webhookUrl(), { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  const sign = (body: string, secret = PAYMENT_SIMULATOR_WEBHOOK_SECRET) => createHmac('sha256', secret).update(body).digest('hex');

  it('credits and invoices a paid order whose page never comes back, through the webhook alone', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { pack_id: 'pack_1000' });
    await payAtGateway(gateway, payment.order_id); // the customer pays and closes the page
    await gateway.webhooksSettled();

    const sent = gateway.webhooks.filter((w) => JSON.parse(w.body).payload.payment.entity.order_id === payment.order_id);
    expect(sent.map((w) => w.event).sort()).to.deep.equal(['order.paid', 'payment.captured']);
    expect(sent.map((w) => w.status)).to.deep.equal([200, 200]);
    expect(await balance(headers)).to.equal(155_000);
    expect(await traces(workspaceId, payment.id)).to.deep.equal({ credits: 1, invoices: 1, audits: 1 });
    const stored = await Payment.findById(payment.id).lean();
    expect(stored).to.include({ status: 'paid', completed_via: 'webhook', gateway_payment_id: gateway.orders.get(payment.order_id)!.payment_id });
    expect(sent.map((w) => w.eventId)).to.include(stored!.completed_by_event);
    const audit = await AuditEvent.findOne({ workspace_id: workspaceId, action: 'billing.topup_completed' }).lean();
    expect(audit?.actor).to.deep.include({ type: 'anonymous', name: 'Razorpay webhook' });
    const listed = await (await api.request('/api/v1/billing/payments', { headers })).json();
    expect(listed[0]).to.include({ id: payment.id, status: 'paid' });
  });

  it('the page completing after the webhook credits nothing more and answers the same payment', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    const paid = await payAtGateway(gateway, payment.order_id);
    await gateway.webhooksSettled();
    const res = await complete(headers, payment.id, paid);
    expect(res.status, await res.clone().text()).to.equal(200);
    expect(await res.json()).to.include({ id: payment.id, status: 'paid', gateway_payment_id: paid.gateway_payment_id });
    expect(await balance(headers)).to.equal(70_000);
    expect(await traces(workspaceId, payment.id)).to.deep.equal({ credits: 1, invoices: 1, audits: 1 });
  });

  it('a webhook after the page completed changes nothing', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    gateway.webhookUrl = null; // the customer's page is first
    let paid;
    try {
      paid = await payAtGateway(gateway, payment.order_id);
    } finally {
      gateway.webhookUrl = webhookUrl();
    }
    expect((await complete(headers, payment.id, paid)).status).to.equal(200);
    const before = await Payment.findById(payment.id).lean();
    const late = await gateway.sendWebhook(payment.order_id, 'order.paid');
    expect(late.status).to.equal(200);
    expect(await Payment.findById(payment.id).lean()).to.deep.equal(before);
    expect(before).to.include({ completed_via: 'checkout' });
    expect(await balance(headers)).to.equal(70_000);
    expect(await traces(workspaceId, payment.id)).to.deep.equal({ credits: 1, invoices: 1, audits: 1 });
  });

  it('a replayed webhook (the same event again, as Razorpay retries and dashboard replays send it) does nothing twice', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 30_000 });
    await payAtGateway(gateway, payment.order_id);
    await gateway.webhooksSettled();
    const first = gateway.webhooks.find((w) => JSON.parse(w.body).payload.payment.entity.order_id === payment.order_id)!;
    const replays = await Promise.all([gateway.replayWebhook(first), gateway.replayWebhook(first), gateway.replayWebhook(first)]);
    expect(replays.map((r) => r.status)).to.deep.equal([200, 200, 200]);
    expect(await balance(headers)).to.equal(80_000);
    expect(await traces(workspaceId, payment.id)).to.deep.equal({ credits: 1, invoices: 1, audits: 1 });
  });

  it('refuses a webhook without a valid signature (403) and changes nothing', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    gateway.webhookUrl = null; // paid, but no genuine event has reached the API
    try {
      await payAtGateway(gateway, payment.order_id);
    } finally {
      gateway.webhookUrl = webhookUrl();
    }
    const order = gateway.orders.get(payment.order_id)!;
    const body = JSON.stringify({
      entity: 'event',
      event: 'payment.captured',
      contains: ['payment'],
      payload: {
        payment: { entity: { id: order.payment_id, entity: 'payment', amount: order.amount, currency: 'INR', status: 'captured', order_id: order.id } },
      },
      created_at: 1_700_000_000,
    });
    const tampered = body.replace(`"amount":${order.amount}`, `"amount":${order.amount} `);
    const attempts: [string, Headers][] = [
      [body, {}], // unsigned
      [body, { 'X-Razorpay-Signature': sign(body, 'not the webhook secret') }],
      [body, { 'X-Razorpay-Signature': sign(body, 'simulator-key-secret') }], // the key secret is not the webhook's
      [tampered, { 'X-Razorpay-Signature': sign(body) }], // signed, then changed
      [body, { 'X-Razorpay-Signature': 'zz' }],
    ];
    for (const [text, signature] of attempts) {
      const res = await post(text, { 'x-razorpay-event-id': 'evt_forged0000000', ...signature });
      expect(res.status, await res.clone().text()).to.equal(403);
      expect(((await res.json()) as { detail: string }).detail).to.match(/X-Razorpay-Signature/);
    }
    expect(await Payment.findById(payment.id).lean()).to.include({ status: 'created', gateway_payment_id: null, invoice_id: null, completed_via: null });
    expect(await balance(headers)).to.equal(50_000);
    expect(await traces(workspaceId, payment.id)).to.deep.equal({ credits: 0, invoices: 0, audits: 0 });

    // The same body, signed with the webhook secret, is taken: the refusals were the signature's.
    const genuine = await post(body, { 'X-Razorpay-Signature': sign(body), 'x-razorpay-event-id': 'evt_genuine000000' });
    expect(genuine.status, await genuine.clone().text()).to.equal(200);
    expect(await balance(headers)).to.equal(70_000);
  });

  it('answers other events, and orders that are not ours, 200 and changes nothing', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    const failed = JSON.stringify({
      entity: 'event',
      event: 'payment.failed',
      contains: ['payment'],
      payload: {
        payment: { entity: { id: 'pay_failed00000000', status: 'failed', order_id: payment.order_id, amount: payment.total_paise, currency: 'INR' } },
      },
    });
    const authorized = JSON.stringify({
      entity: 'event',
      event: 'payment.captured',
      contains: ['payment'],
      payload: {
        payment: { entity: { id: 'pay_auth0000000000', status: 'authorized', order_id: payment.order_id, amount: payment.total_paise, currency: 'INR' } },
      },
    });
    const stranger = JSON.stringify({
      entity: 'event',
      event: 'order.paid',
      contains: ['payment', 'order'],
      payload: { payment: { entity: { id: 'pay_other000000000', status: 'captured', order_id: 'order_NotOurs0000000', amount: 11_800, currency: 'INR' } } },
    });
    for (const body of [failed, authorized, stranger]) {
      const res = await post(body, { 'X-Razorpay-Signature': sign(body) });
      expect(res.status, await res.clone().text()).to.equal(200);
      expect(await res.json()).to.deep.equal({});
    }
    expect(await Payment.findById(payment.id).lean()).to.include({ status: 'created' });
    expect(await traces(workspaceId, payment.id)).to.deep.equal({ credits: 0, invoices: 0, audits: 0 });
  });

  it('refuses every webhook when no webhook secret is configured', async () => {
    const { gateway: other, providers } = await startPaymentGateway();
    const unconfigured = await startApi({ providers: { ...providers, payments: { ...providers.payments!, webhookSecret: null } } });
    try {
      const body = JSON.stringify({ event: 'order.paid', payload: {} });
      const res = await fetch(`${unconfigured.baseUrl}/api/v1/billing/razorpay/webhook`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Razorpay-Signature': sign(body) },
        body,
      });
      expect(res.status).to.equal(403);
    } finally {
      await unconfigured.close();
      await other.close();
    }
  });
});
