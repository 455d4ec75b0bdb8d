import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * Messages of the payment check workflow (`payment-<order id>`, docs/decisions/0186), shared by
 * the API (starter, signaller) and the workflow. Importing this pulls in no workflow code.
 */

export interface PaymentCheckInput {
  /** Our payment's id. */
  paymentId: string;
  /** The gateway's order. */
  orderId: string;
  workspaceId: string;
  /**
   * Seconds to wait before each check of the order at the gateway; none: PAYMENT_CHECK_DELAYS_SECONDS.
   * Tests pass a short schedule; the last check ends the workflow.
   */
  checkDelaysSeconds?: number[];
}

/**
 * When the workflow checks the order: 1, 2, 5, 10, 15 and 30 minutes apart, then every hour,
 * until 24 hours have passed since the order was created, as long as Razorpay retries a
 * webhook it could not deliver (docs/decisions/0186).
 */
export const PAYMENT_CHECK_DELAYS_SECONDS: readonly number[] = (() => {
  const delays = [60, 120, 300, 600, 900, 1800];
  const horizon = 24 * 3600;
  let total = delays.reduce((sum, d) => sum + d, 0);
  while (total + 3600 <= horizon) {
    delays.push(3600);
    total += 3600;
  }
  if (total < horizon) delays.push(horizon - total);
  return delays;
})();

/** How a check found the order: settled by us (now or before), still open at the gateway, or the gateway did not answer usefully. */
export type PaymentCheckResult = { status: 'completed'; now: boolean } | { status: 'open'; orderStatus: string } | { status: 'unreachable'; reason: string };

export type PaymentCheckOutcome = 'completed_by_check' | 'completed_elsewhere' | 'expired';

export interface PaymentCheckState {
  paymentId: string;
  orderId: string;
  checks: number;
  lastCheck: PaymentCheckResult | null;
  outcome: PaymentCheckOutcome | null;
}

/** The page's or the webhook's completion settled the payment: the workflow ends without another check. */
export const paymentSettledSignal = defineSignal('settled');
export const paymentCheckStateQuery = defineQuery<PaymentCheckState>('state');

/** The workflow's signature, for typed clients that import no workflow code (workflows/payment-check.ts implements it). */
export type PaymentCheckWorkflow = (input: PaymentCheckInput) => Promise<PaymentCheckState>;
