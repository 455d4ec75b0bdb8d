import { Router } from 'express';
import type { Client } from '@temporalio/client';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { auditTopupCompleted, completePayment, recentPayments, startTopup } from '../../domain/billing/payments';
import { notifyPaymentSettled, startPaymentCheck } from '../../domain/billing/temporal';
import { recentInvoices, type Seller, type StoredInvoice } from '../../domain/billing/invoices';
import { renderInvoicePdf } from '../../domain/billing/invoice-pdf';
import { ledgerPage } from '../../domain/billing/ledger-pages';
import { CREDIT_PACKS } from '../../domain/billing/packs';
import { findByIdOwned } from '../../db/by-id';
import { Invoice } from '../../db/models/invoice';
import { Workspace } from '../../db/models/workspace';
import { planOf } from '../../domain/billing/plans';
import type { PaymentGateway } from '../../providers/payments/gateway';
import type { operations } from '../../schemas/api-types';
import { actorOf, creatorOf, workspaceAccessOf } from '../auth/context';
import { clientIp } from '../auth/sessions';
import { HttpError, validationFailed } from '../../domain/shared/http-error';
import { fromProvider } from '../../domain/shared/provider-errors';
import { balanceSummaryFor } from '../../domain/billing/balance';
import { invoiceView, ledgerItemView, packView, paymentView, planView } from '../../domain/billing/views';
import { apiRouter } from './router';

type LedgerQuery = NonNullable<operations['listLedger']['parameters']['query']>;
type TopupBody = operations['startTopup']['requestBody']['content']['application/json'];
type CompletionBody = operations['completePayment']['requestBody']['content']['application/json'];

export interface BillingDeps {
  now: () => Date;
  gateway: PaymentGateway;
  seller: Seller;
  temporal: Client;
  /** The order checks' schedule (tests shorten it); none: the workflow's own (docs/decisions/0186). */
  paymentCheckDelaysSeconds?: number[];
}

const workspaceNotFound = () => new HttpError(404, 'workspace not found');

/**
 * The balance, its ledger, the plan, credit packs, top-ups through the payment gateway and
 * their GST invoices (contract, "Billing"). Money moves only through the ledger
 * (domain/billing/ledger.ts); a top-up credits it once, when the gateway's signature verifies.
 */
export function billingRoutes(deps: BillingDeps): Router {
  const router = apiRouter();

  router.get('/billing', async (_req, res) => {
    res.json(await balanceSummaryFor(workspaceAccessOf(res).workspace.id));
  });

  router.get('/billing/ledger', async (req, res) => {
    const query = req.query as unknown as LedgerQuery;
    const page = await ledgerPage(workspaceAccessOf(res).workspace.id, query.limit ?? 50, query.skip ?? 0);
    res.json({ items: page.items.map(ledgerItemView), total: page.total });
  });

  router.get('/billing/plan', async (_req, res) => {
    const workspace = await Workspace.findById(workspaceAccessOf(res).workspace.id, { plan: 1, concurrency_limit: 1 }).lean();
    if (!workspace) throw workspaceNotFound();
    const plan = planOf(workspace.plan);
    res.json(planView(plan, workspace.concurrency_limit ?? plan.concurrentCalls));
  });

  router.get('/billing/packs', (_req, res) => {
    res.json(CREDIT_PACKS.map(packView));
  });

  router.post('/billing/topup', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as TopupBody;
    if ((body.pack_id === undefined) === (body.amount_paise === undefined)) {
      throw validationFailed([
        { type: 'value_error', loc: ['body'], msg: 'give exactly one of pack_id (a credit pack) and amount_paise (a custom amount)', input: body },
      ]);
    }
    const at = deps.now();
    const payment = await fromProvider(
      startTopup(deps.gateway, deps.seller, { workspaceId: workspace.id, packId: body.pack_id, amountPaise: body.amount_paise, by: creatorOf(res), at }),
    );
    // Before the page gets the order: a paid order is then always completed, even when the page never comes back.
    await startPaymentCheck(
      deps.temporal,
      {
        paymentId: payment._id,
        orderId: payment.order_id,
        workspaceId: workspace.id,
        ...(deps.paymentCheckDelaysSeconds ? { checkDelaysSeconds: deps.paymentCheckDelaysSeconds } : {}),
      },
      { totalPaise: payment.total_paise },
    );
    await recordWorkspaceAudit(workspace.id, {
      action: 'billing.topup_started',
      actor: actorOf(res),
      target: { type: 'payment', id: payment._id },
      at,
      ip: clientIp(req),
      details: { pack_id: payment.pack_id ?? null, value_paise: payment.value_paise, total_paise: payment.total_paise },
    });
    res.status(201).json({
      ...paymentView(payment),
      checkout: {
        gateway: deps.gateway.name,
        key_id: deps.gateway.keyId,
        order_id: payment.order_id,
        amount_paise: payment.total_paise,
        currency: payment.currency,
      },
    });
  });

  router.post('/billing/payments/:payment_id/complete', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as CompletionBody;
    const outcome = await completePayment(deps.gateway, deps.seller, {
      workspaceId: workspace.id,
      paymentId: req.params.payment_id as string,
      gatewayPaymentId: body.gateway_payment_id,
      signature: body.signature,
      now: deps.now,
    });
    switch (outcome.kind) {
      case 'not_found':
        throw new HttpError(404, 'payment not found');
      case 'bad_signature':
        throw new HttpError(400, "the gateway's signature does not verify for this payment's order; nothing was credited");
      case 'busy':
        throw new HttpError(409, 'the payment is being completed by another request; retry in a moment');
    }
    if (outcome.now) await auditTopupCompleted(outcome.payment, { actor: actorOf(res), at: outcome.payment.completed_at ?? deps.now(), ip: clientIp(req) });
    // The order's check workflow may end now rather than at its next check.
    await notifyPaymentSettled(deps.temporal, outcome.payment.order_id);
    res.json(paymentView(outcome.payment));
  });

  router.get('/billing/payments', async (_req, res) => {
    const payments = await recentPayments(workspaceAccessOf(res).workspace.id);
    res.json(payments.map(paymentView));
  });

  router.get('/billing/invoices', async (_req, res) => {
    const invoices = await recentInvoices(workspaceAccessOf(res).workspace.id);
    res.json(invoices.map(invoiceView));
  });

  router.get('/billing/invoices/:invoice_id/pdf', async (req, res) => {
    const invoice = await findByIdOwned<StoredInvoice>(Invoice, req.params.invoice_id as string, { workspace_id: workspaceAccessOf(res).workspace.id });
    if (!invoice) throw new HttpError(404, 'invoice not found');
    const pdf = Buffer.from(await renderInvoicePdf(invoice));
    res
      .status(200)
      .set({
        'Content-Type': 'application/pdf',
        'Content-Length': String(pdf.length),
        'Content-Disposition': `attachment; filename="invoice-${invoice.number.replace(/\//g, '-')}.pdf"`,
        'X-Content-Type-Options': 'nosniff',
      })
      .end(pdf);
  });

  return router;
}
