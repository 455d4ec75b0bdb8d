import { expect } from 'chai';
import { Invoice } from '../../../db/models/invoice';
import { LedgerItem } from '../../../db/models/ledger-item';
import { Payment } from '../../../db/models/payment';
import type { PaymentSimulator } from '../../../simulators/payments/simulator';
import { workflowIds } from '../../../contracts/ids';
import type { PaymentCheckState } from '../../../contracts/payments';
import type { RunningApi } from '../../support/api';
import { withJson } from '../../support/accounts';
import { payAtGateway, paymentOwner, paymentStackPerSuite, startedTopup } from '../../support/payment-gateway';
import { createLocal } from '../../support/servers';

type Headers = Record<string, string>;

/**
 * The order check workflow over HTTP (docs/decisions/0186): the API starts `payment-<order id>`
 * with the top-up, a real billing worker on the Temporal dev server runs it on a short
 * schedule (seconds instead of minutes), and it asks the Razorpay simulator about the order.
 * No webhook is ever sent here: a paid order must still end in credits and an invoice.
 */
describe('billing: each open order is checked at the gateway until paid', () => {
  let api: RunningApi;
  let gateway: PaymentSimulator;
  const stack = paymentStackPerSuite({ workers: ['billing'], paymentCheckDelaysSeconds: [1, 1, 1, 1, 1, 1] });
  before(() => ({ api, gateway } = stack));

  const owner = () => paymentOwner(api);
  const started = (headers: Headers, body: unknown) => startedTopup(api, headers, body);
  const balance = async (headers: Headers) => (await (await api.request('/api/v1/billing', { headers })).json()).credits_paise as number;
  const checkOf = (orderId: string) => createLocal().client.workflow.getHandle(workflowIds.paymentCheck(orderId));
  const outcomeOf = (orderId: string) => checkOf(orderId).result() as Promise<PaymentCheckState>;

  it('credits and invoices a paid order whose page never comes back and whose webhook never arrives', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { pack_id: 'pack_1000' });
    expect((await checkOf(payment.order_id).describe()).status.name).to.equal('RUNNING');
    await payAtGateway(gateway, payment.order_id); // paid, the page closed, no webhook configured
    expect(gateway.webhooks).to.have.length(0);

    const outcome = await outcomeOf(payment.order_id);
    expect(outcome).to.include({ paymentId: payment.id, orderId: payment.order_id, outcome: 'completed_by_check' });
    expect(await balance(headers)).to.equal(155_000);
    expect(await Payment.findById(payment.id).lean()).to.include({
      status: 'paid',
      completed_via: 'gateway_check',
      gateway_payment_id: gateway.orders.get(payment.order_id)!.payment_id,
    });
    expect(await LedgerItem.countDocuments({ workspace_id: workspaceId, kind: 'topup', payment_id: payment.id })).to.equal(1);
    expect(await Invoice.countDocuments({ workspace_id: workspaceId, payment_id: payment.id })).to.equal(1);
  });

  it('ends without crediting again when the page completed the payment first', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    const paid = await payAtGateway(gateway, payment.order_id);
    const res = await api.request(`/api/v1/billing/payments/${payment.id}/complete`, withJson('POST', paid, headers));
    expect(res.status, await res.clone().text()).to.equal(200);

    const outcome = await outcomeOf(payment.order_id);
    expect(outcome.outcome).to.equal('completed_elsewhere');
    expect(await balance(headers)).to.equal(70_000);
    expect(await LedgerItem.countDocuments({ workspace_id: workspaceId, kind: 'topup', payment_id: payment.id })).to.equal(1);
    expect(await Invoice.countDocuments({ workspace_id: workspaceId, payment_id: payment.id })).to.equal(1);
    expect(await Payment.findById(payment.id).lean()).to.include({ completed_via: 'checkout' });
  });

  it('gives up on an order nobody pays after its last check, crediting nothing', async () => {
    const { workspaceId, headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    const outcome = await outcomeOf(payment.order_id);
    expect(outcome).to.include({ outcome: 'expired', checks: 6 });
    expect(outcome.lastCheck).to.deep.equal({ status: 'open', orderStatus: 'created' });
    expect(await Payment.findById(payment.id).lean()).to.include({ status: 'created' });
    expect(await balance(headers)).to.equal(50_000);
    expect(await LedgerItem.countDocuments({ workspace_id: workspaceId, kind: 'topup' })).to.equal(0);
  });

  it('keeps checking while the gateway does not answer, and completes once it does', async () => {
    const { headers } = await owner();
    const payment = await started(headers, { amount_paise: 20_000 });
    await payAtGateway(gateway, payment.order_id);
    gateway.mode = 'failing';
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const state = await checkOf(payment.order_id).query<PaymentCheckState>('state');
      expect(state.lastCheck?.status).to.equal('unreachable');
    } finally {
      gateway.mode = 'normal';
    }
    expect((await outcomeOf(payment.order_id)).outcome).to.equal('completed_by_check');
    expect(await balance(headers)).to.equal(70_000);
  });
});
