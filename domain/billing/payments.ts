import { recordWorkspaceAudit, type AuditActor } from '../audit/audit-log';
import { newId } from '../../db/ids';
import { KycRecord } from '../../db/models/kyc';
import { Payment, type PaymentDocument } from '../../db/models/payment';
import { appendLedgerItem } from './ledger';
import type { PaymentGateway } from '../../providers/payments/gateway';
import { gstFor, taxTotal } from './gst';
import { issueInvoice, type Seller } from './invoices';
import { packOf } from './packs';

export type StoredPayment = PaymentDocument & { _id: string };

/** How long a completion holds a payment before another may take it over (it crashed). */
const COMPLETION_LEASE_MS = 30_000;
/** How long a second completion waits for the first to finish before answering 409. */
const WAIT_FOR_COMPLETION_MS = 10_000;

export interface TopupRequest {
  workspaceId: string;
  /** A pack, or `amountPaise` for a custom amount (exactly one). */
  packId?: string;
  amountPaise?: number;
  by: { user_id: string | null; name: string };
  at: Date;
}

/**
 * Starts a top-up: fixes the price, bonus and tax (by the KYC address's state now), creates
 * the gateway's order for the total and records the payment as `created`. The record is
 * written after the order, so a gateway that fails leaves nothing behind.
 */
export async function startTopup(gateway: PaymentGateway, seller: Seller, request: TopupRequest): Promise<StoredPayment> {
  const pack = request.packId ? packOf(request.packId) : undefined;
  if (request.packId && !pack) throw new Error(`unknown pack ${request.packId}`);
  const valuePaise = pack?.valuePaise ?? request.amountPaise!;
  const bonusPaise = pack?.bonusPaise ?? 0;
  const kyc = await KycRecord.findById(request.workspaceId, { 'details.address.state': 1 }).lean();
  const tax = gstFor(valuePaise, kyc?.details?.address?.state ?? null, seller.state);
  const totalPaise = valuePaise + taxTotal(tax);
  const id = newId();
  const { orderId } = await gateway.createOrder({
    amountPaise: totalPaise,
    currency: 'INR',
    receipt: id,
    notes: { workspace_id: request.workspaceId, payment_id: id },
  });
  const payment = await Payment.create({
    _id: id,
    workspace_id: request.workspaceId,
    status: 'created',
    pack_id: pack?.id ?? null,
    value_paise: valuePaise,
    bonus_paise: bonusPaise,
    credits_paise: valuePaise + bonusPaise,
    tax,
    total_paise: totalPaise,
    currency: 'INR',
    gateway: gateway.name,
    order_id: orderId,
    created_by: request.by,
    created_at: request.at,
  });
  return payment.toObject<StoredPayment>();
}

export type Completion = { kind: 'not_found' } | { kind: 'bad_signature' } | { kind: 'busy' } | { kind: 'completed'; payment: StoredPayment; now: boolean };

/** What proved the payment: the customer's page (its signature), the gateway's webhook, or the gateway's own answer about the order. */
export type CompletionSource = { via: 'checkout' } | { via: 'webhook'; eventId: string | null } | { via: 'gateway_check' };

/**
 * Completes a payment the customer's page reports: checks the checkout's signature against
 * the payment's own order, then settles it (settlePayment).
 */
export async function completePayment(
  gateway: PaymentGateway,
  seller: Seller,
  input: { workspaceId: string; paymentId: string; gatewayPaymentId: string; signature: string; now: () => Date },
): Promise<Completion> {
  const payment = await Payment.findById(input.paymentId).lean<StoredPayment>();
  if (!payment || payment.workspace_id !== input.workspaceId) return { kind: 'not_found' };
  if (!gateway.verifyPayment({ orderId: payment.order_id, paymentId: input.gatewayPaymentId, signature: input.signature })) return { kind: 'bad_signature' };
  return settlePayment(payment, seller, { gatewayPaymentId: input.gatewayPaymentId, source: { via: 'checkout' }, now: input.now });
}

export type OrderCompletion = Completion | { kind: 'amount_mismatch'; payment: StoredPayment };

/**
 * Completes the payment of an order the gateway itself says was captured (its signed webhook,
 * or its answer to `GET /v1/orders/{id}`): the same settlement as the page's, so whichever of
 * the three comes first credits and invoices, and the others change nothing. A captured
 * amount or currency other than the order's is not credited (never expected from Razorpay,
 * which captures an order's amount only).
 */
export async function completePaidOrder(
  seller: Seller,
  input: { orderId: string; gatewayPaymentId: string; amountPaise: number; currency: string; source: CompletionSource; now: () => Date },
): Promise<OrderCompletion> {
  const payment = await Payment.findOne({ order_id: input.orderId }).lean<StoredPayment>();
  if (!payment) return { kind: 'not_found' };
  if (input.amountPaise !== payment.total_paise || input.currency !== payment.currency) return { kind: 'amount_mismatch', payment };
  return settlePayment(payment, seller, { gatewayPaymentId: input.gatewayPaymentId, source: input.source, now: input.now });
}

/**
 * Credits the ledger and issues the invoice of a payment, once. A completion claims the
 * payment (`created` -> `completing`, one guarded update); a second one finds it claimed or
 * paid and answers the payment unchanged (waiting for the first to finish). Both steps after
 * the claim are idempotent on the payment id, so a completion that takes over a crashed one
 * (its lease ran out) finishes the work without doing any of it twice.
 */
async function settlePayment(
  payment: StoredPayment,
  seller: Seller,
  input: { gatewayPaymentId: string; source: CompletionSource; now: () => Date },
): Promise<Completion> {
  if (payment.status === 'paid') return { kind: 'completed', payment, now: false };
  const at = input.now();
  const claimed = await Payment.findOneAndUpdate(
    { _id: payment._id, $or: [{ status: 'created' }, { status: 'completing', lease_until: { $lt: at } }] },
    {
      $set: {
        status: 'completing',
        lease_until: new Date(at.getTime() + COMPLETION_LEASE_MS),
        gateway_payment_id: input.gatewayPaymentId,
        completed_via: input.source.via,
        completed_by_event: input.source.via === 'webhook' ? input.source.eventId : null,
      },
    },
    { returnDocument: 'after' },
  ).lean<StoredPayment>();
  if (!claimed) {
    const paid = await waitUntilPaid(payment._id);
    return paid ? { kind: 'completed', payment: paid, now: false } : { kind: 'busy' };
  }
  return { kind: 'completed', payment: await finish(claimed, seller, at), now: true };
}

/** The payment of a gateway order, if it is ours. */
export function paymentOfOrder(orderId: string): Promise<StoredPayment | null> {
  return Payment.findOne({ order_id: orderId }).lean<StoredPayment>();
}

async function finish(payment: StoredPayment, seller: Seller, at: Date): Promise<StoredPayment> {
  await appendLedgerItem({
    workspaceId: payment.workspace_id,
    kind: 'topup',
    amountPaise: payment.credits_paise,
    idempotencyKey: `topup:${payment._id}`,
    at,
    note: topupNote(payment),
    paymentId: payment._id,
    byName: payment.created_by?.name ?? null,
  });
  const invoice = await issueInvoice(payment, seller, at);
  const paid = await Payment.findOneAndUpdate(
    { _id: payment._id, status: 'completing' },
    { $set: { status: 'paid', completed_at: at, invoice_id: invoice._id, lease_until: null } },
    { returnDocument: 'after' },
  ).lean<StoredPayment>();
  // Another completion that took over may have marked it paid first: the same outcome.
  return paid ?? (await Payment.findById(payment._id).lean<StoredPayment>())!;
}

function topupNote(payment: StoredPayment): string {
  const bonus = payment.bonus_paise ? ` + ${payment.bonus_paise} paise bonus` : '';
  return `top-up ${payment.pack_id ?? 'custom amount'}: ${payment.value_paise} paise${bonus}`;
}

async function waitUntilPaid(paymentId: string): Promise<StoredPayment | null> {
  const deadline = Date.now() + WAIT_FOR_COMPLETION_MS;
  for (;;) {
    const payment = await Payment.findById(paymentId).lean<StoredPayment>();
    if (payment?.status === 'paid') return payment;
    if (Date.now() > deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The workspace's last 100 payments, newest first. */
export function recentPayments(workspaceId: string): Promise<StoredPayment[]> {
  return Payment.find({ workspace_id: workspaceId }).sort({ created_at: -1, _id: -1 }).limit(100).lean<StoredPayment[]>();
}

/**
 * The audit log's `billing.topup_completed`, written by whichever completion settled the
 * payment (`now`): a person through the page, or the gateway (webhook, order check), which
 * acts as no member of the workspace.
 */
export async function auditTopupCompleted(payment: StoredPayment, record: { actor: AuditActor; at: Date; ip?: string | null }): Promise<void> {
  await recordWorkspaceAudit(payment.workspace_id, {
    action: 'billing.topup_completed',
    actor: record.actor,
    target: { type: 'payment', id: payment._id },
    at: record.at,
    ip: record.ip ?? null,
    details: { credits_paise: payment.credits_paise, total_paise: payment.total_paise, invoice_id: payment.invoice_id, via: payment.completed_via },
  });
}

/** The gateway as the audit log names it when it completed a payment itself. */
export function gatewayActor(via: 'webhook' | 'gateway_check'): AuditActor {
  return { type: 'anonymous', id: null, name: via === 'webhook' ? 'Razorpay webhook' : 'Razorpay order check' };
}
