import express, { type Request, type Router } from 'express';
import { apiRouter } from './router';
import type { Client } from '@temporalio/client';
import { auditTopupCompleted, completePaidOrder, gatewayActor } from '../../domain/billing/payments';
import { notifyPaymentSettled } from '../../domain/billing/temporal';
import type { Seller } from '../../domain/billing/invoices';
import { HttpError } from '../../domain/shared/http-error';
import type { Logger } from '../../domain/shared/logger';
import { capturedPaymentOf, RAZORPAY_EVENT_ID_HEADER, RAZORPAY_SIGNATURE_HEADER, verifyWebhookSignature } from '../../providers/payments/webhooks';

export interface PaymentWebhookDeps {
  now: () => Date;
  seller: Seller;
  temporal: Client;
  logger: Logger;
  /** The secret of the webhook set in Razorpay's dashboard (RAZORPAY_WEBHOOK_SECRET); absent: every webhook is 403. */
  webhookSecret: string | null | undefined;
}

/** The webhook's path under each API base. */
export const RAZORPAY_WEBHOOK_PATH = '/billing/razorpay/webhook';

/**
 * The JSON parser of the webhook's path, which keeps the raw bytes: the signature is over the
 * body exactly as Razorpay sent it, which re-serializing the parsed JSON would not reproduce.
 * Mounted before the app's own JSON parser, which then leaves the parsed body alone.
 */
export function rawJsonForWebhooks(): express.RequestHandler {
  return express.json({
    limit: '1mb',
    verify: (req, _res, buf) => {
      (req as RequestWithRawBody).rawBody = Buffer.from(buf);
    },
  });
}

type RequestWithRawBody = Request & { rawBody?: Buffer };

/**
 * Razorpay's webhook (docs/decisions/0185): no credentials; the signature over the raw body
 * under the webhook secret proves the sender. `order.paid` and `payment.captured` complete the
 * order's payment through the same settlement as the customer's page, so whichever comes first
 * credits and invoices once; a repeated or replayed event, or the second of the two events,
 * changes nothing. Every other event, and orders that are not ours, are answered 200 and
 * ignored, so that Razorpay does not retry them.
 */
export function paymentWebhookRoutes(deps: PaymentWebhookDeps): Router {
  const router = apiRouter();

  router.post(RAZORPAY_WEBHOOK_PATH, async (req, res) => {
    const rawBody = (req as RequestWithRawBody).rawBody;
    if (!rawBody || !verifyWebhookSignature(rawBody, req.get(RAZORPAY_SIGNATURE_HEADER), deps.webhookSecret)) {
      throw new HttpError(403, 'no valid X-Razorpay-Signature of the payment gateway (or its webhook secret is not configured); nothing was changed');
    }
    const eventId = req.get(RAZORPAY_EVENT_ID_HEADER) ?? null;
    const event = (req.body as { event?: unknown }).event;
    const captured = capturedPaymentOf(req.body);
    if (!captured) {
      deps.logger.info({ msg: 'payment gateway webhook ignored', event, event_id: eventId });
      return void res.json({});
    }
    const outcome = await completePaidOrder(deps.seller, {
      orderId: captured.orderId,
      gatewayPaymentId: captured.paymentId,
      amountPaise: captured.amountPaise,
      currency: captured.currency,
      source: { via: 'webhook', eventId },
      now: deps.now,
    });
    switch (outcome.kind) {
      case 'not_found':
        // Another integration on the same gateway account, or an order from another deployment.
        deps.logger.info({ msg: 'payment gateway webhook for an order that is not ours', event, event_id: eventId, order_id: captured.orderId });
        return void res.json({});
      case 'amount_mismatch':
        deps.logger.error({
          msg: 'payment gateway webhook captured another amount than the order; not credited',
          event,
          event_id: eventId,
          order_id: captured.orderId,
          payment_id: outcome.payment._id,
        });
        return void res.json({});
      case 'busy':
        // Another completion is at work: a non-2xx makes Razorpay deliver the event again later.
        throw new HttpError(409, 'the payment is being completed by another request; deliver the event again later');
    }
    if (outcome.kind !== 'completed') return;
    if (outcome.now) await auditTopupCompleted(outcome.payment, { actor: gatewayActor('webhook'), at: outcome.payment.completed_at ?? deps.now(), ip: null });
    await notifyPaymentSettled(deps.temporal, captured.orderId);
    deps.logger.info({ msg: 'payment gateway webhook', event, event_id: eventId, payment_id: outcome.payment._id, completed_now: outcome.now });
    res.json({});
  });

  return router;
}
