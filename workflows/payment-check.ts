import { condition, log, proxyActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import {
  PAYMENT_CHECK_DELAYS_SECONDS,
  paymentCheckStateQuery,
  paymentSettledSignal,
  type PaymentCheckInput,
  type PaymentCheckState,
} from '../contracts/payments';

const { checkPaymentAtGateway } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  // The gateway's own silence is a result (`unreachable`), not a failure: this retries only
  // what the store (or a worker without the gateway) throws, until it is back.
  retry: { initialInterval: '5 seconds', maximumInterval: '10 minutes' },
});

/**
 * One open gateway order (`payment-<order id>`, docs/decisions/0186): a customer may pay and
 * close the page, and the webhook may never arrive, so this asks the gateway about the order
 * on a backing-off schedule of durable timers and, once it is paid, completes the payment
 * through the same idempotent settlement as the page and the webhook (credits + invoice,
 * once). It ends when a check finds the payment completed (by itself or anyone), when the page
 * or the webhook signal `settled`, or after the schedule's last check (24 h).
 */
export async function paymentCheckWorkflow(input: PaymentCheckInput): Promise<PaymentCheckState> {
  const state: PaymentCheckState = { paymentId: input.paymentId, orderId: input.orderId, checks: 0, lastCheck: null, outcome: null };
  let settled = false;
  setHandler(paymentSettledSignal, () => {
    settled = true;
  });
  setHandler(paymentCheckStateQuery, () => state);

  const delays = input.checkDelaysSeconds?.length ? input.checkDelaysSeconds : PAYMENT_CHECK_DELAYS_SECONDS;
  for (const [index, delay] of delays.entries()) {
    setCurrentDetails(`waiting for the customer to pay order ${input.orderId}; check ${index + 1} of ${delays.length} in ${delay} s`);
    if (await condition(() => settled, delay * 1000)) {
      state.outcome = 'completed_elsewhere';
      break;
    }
    const result = await checkPaymentAtGateway({ paymentId: input.paymentId });
    state.checks += 1;
    state.lastCheck = result;
    if (result.status === 'completed') {
      state.outcome = result.now ? 'completed_by_check' : 'completed_elsewhere';
      break;
    }
    if (result.status === 'unreachable')
      log.warn('the payment gateway did not answer about an order; checking again later', { orderId: input.orderId, reason: result.reason });
  }
  state.outcome ??= 'expired';
  setCurrentDetails(
    state.outcome === 'expired'
      ? `order ${input.orderId} not paid after ${state.checks} checks; a later webhook or page completion still credits it`
      : `payment ${input.paymentId} completed (${state.outcome === 'completed_by_check' ? 'by this check' : 'by the page or the webhook'})`,
  );
  log.info('payment check ended', { paymentId: input.paymentId, orderId: input.orderId, outcome: state.outcome, checks: state.checks });
  return state;
}
