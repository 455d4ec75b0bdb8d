import type { Client } from '@temporalio/client';
import { workflowIds } from '../../contracts/ids';
import { paymentSettledSignal, type PaymentCheckInput, type PaymentCheckWorkflow } from '../../contracts/payments';
import { Kind, WorkspaceId } from '../../contracts/search-attributes';
import { TASK_QUEUES } from '../../contracts/task-queues';

/**
 * Starts the check of a new gateway order, `payment-<order id>` on the billing queue
 * (docs/decisions/0186): it asks the gateway about the order until it is paid (then completes
 * the payment) or 24 hours have passed.
 */
export async function startPaymentCheck(temporal: Client, input: PaymentCheckInput, title: { totalPaise: number }): Promise<void> {
  await temporal.workflow.start<PaymentCheckWorkflow>('paymentCheckWorkflow', {
    taskQueue: TASK_QUEUES.billing,
    workflowId: workflowIds.paymentCheck(input.orderId),
    // One order, one payment: a second start for it is a bug, not a retry to absorb.
    workflowIdConflictPolicy: 'FAIL',
    args: [input],
    typedSearchAttributes: [
      { key: WorkspaceId, value: input.workspaceId },
      { key: Kind, value: 'payment' },
    ],
    staticSummary: `Payment ${input.paymentId} of workspace ${input.workspaceId}: gateway order ${input.orderId}, ${title.totalPaise} paise`,
  });
}

const SIGNAL_WAIT_MS = 2_000;

/**
 * Tells the order's check that the page or the webhook completed the payment, so that it ends
 * now. Best effort: a check that has ended, or a signal that cannot be sent, changes nothing,
 * since the check finds the payment completed at its next look.
 */
export async function notifyPaymentSettled(temporal: Client, orderId: string): Promise<void> {
  try {
    const handle = temporal.workflow.getHandle(workflowIds.paymentCheck(orderId));
    // A Temporal that is down must not hold the customer's completion: the check looks again anyway.
    await temporal.withAbortSignal(AbortSignal.timeout(SIGNAL_WAIT_MS), () => handle.signal(paymentSettledSignal));
  } catch {
    // Ended (WorkflowNotFoundError for a closed run), never started (a payment from before the checks), or Temporal unreachable.
  }
}
