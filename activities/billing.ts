import { ApplicationFailure } from '@temporalio/common';
import { auditTopupCompleted, completePaidOrder, gatewayActor } from '../domain/billing/payments';
import type { Seller } from '../domain/billing/invoices';
import { Payment } from '../db/models/payment';
import { ProviderRefusedError, ProviderUnavailableError } from '../providers/errors';
import type { PaymentGateway } from '../providers/payments/gateway';
import type { PaymentCheckResult } from '../contracts/payments';
import type { Clock } from './clock';

export interface BillingDeps {
  clock: Clock;
  /** The payment gateway's adapter, with the API's key; absent in workers that serve no billing. */
  paymentGateway?: PaymentGateway;
  /** The platform as the seller on the invoices these activities issue. */
  seller?: Seller;
}

/** The payment check workflow's one step (docs/decisions/0186). */
export function createBillingActivities(deps: BillingDeps) {
  return {
    /**
     * Asks the gateway about the payment's order and, when it was captured, completes the
     * payment through the same settlement as the page and the webhook. Safe to repeat: a
     * completed payment is answered from the store without asking the gateway.
     */
    async checkPaymentAtGateway(input: { paymentId: string }): Promise<PaymentCheckResult> {
      if (!deps.paymentGateway || !deps.seller)
        throw ApplicationFailure.retryable('the payment gateway is not configured in this worker (PAYMENTS_BASE_URL)', 'PaymentGatewayNotConfigured');
      const payment = await Payment.findById(input.paymentId, { status: 1, order_id: 1 }).lean();
      if (!payment) throw ApplicationFailure.nonRetryable(`payment ${input.paymentId} does not exist`, 'PaymentNotFound');
      if (payment.status === 'paid') return { status: 'completed', now: false };
      let order;
      try {
        order = await deps.paymentGateway.fetchOrder(payment.order_id);
      } catch (error) {
        if (error instanceof ProviderUnavailableError || error instanceof ProviderRefusedError) return { status: 'unreachable', reason: error.message };
        throw error;
      }
      if (order.status !== 'paid' || !order.capturedPayment) return { status: 'open', orderStatus: order.status };
      const captured = order.capturedPayment;
      const now = () => deps.clock.now();
      const outcome = await completePaidOrder(deps.seller, {
        orderId: order.id,
        gatewayPaymentId: captured.id,
        amountPaise: captured.amountPaise,
        currency: captured.currency,
        source: { via: 'gateway_check' },
        now,
      });
      switch (outcome.kind) {
        case 'completed':
          if (outcome.now) await auditTopupCompleted(outcome.payment, { actor: gatewayActor('gateway_check'), at: outcome.payment.completed_at ?? now() });
          return { status: 'completed', now: outcome.now };
        case 'busy':
          // Another completion holds the payment past the wait; its lease ends it or lets this take over.
          throw ApplicationFailure.retryable(`payment ${input.paymentId} is being completed by another request`, 'PaymentBusy');
        case 'amount_mismatch':
          throw ApplicationFailure.nonRetryable(
            `the gateway captured ${captured.amountPaise} ${captured.currency} for order ${order.id}, not the payment's ${outcome.payment.total_paise} ${outcome.payment.currency}; not credited`,
            'PaymentAmountMismatch',
          );
        default:
          throw ApplicationFailure.nonRetryable(`no payment holds order ${order.id}`, 'PaymentNotFound');
      }
    },
  };
}
