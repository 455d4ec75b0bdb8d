import type { Client, WorkflowHandle } from '@temporalio/client';
import { deliveryDetails, deliverySummary, type DeliveryTitle, type DeliveryWorkflowInput, type WebhookDeliveryWorkflow } from '../../workflows/shared/webhooks';
import { Kind, WorkspaceId } from '../../workflows/shared/search-attributes';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';

export interface StartDelivery {
  deliveryId: string;
  workspaceId: string;
  mode: DeliveryWorkflowInput['mode'];
  trigger?: DeliveryWorkflowInput['trigger'];
  attemptsBefore?: number;
  /**
   * `never`: the id may never run twice (fan-out: a retried activity must not send a
   * delivered event again). `after-close`: a new run may follow a closed one (a manual retry
   * of a delivery whose schedule has ended).
   */
  reuse: 'never' | 'after-close';
  /** The event and where it goes, for the workflow's summary in the Temporal UI. */
  title: DeliveryTitle;
}

/** Starts the delivery workflow `whd_<id>` on the `webhooks` queue; the workflow id is the delivery id. */
export function startDeliveryWorkflow(temporal: Client, start: StartDelivery): Promise<WorkflowHandle<WebhookDeliveryWorkflow>> {
  return temporal.workflow.start<WebhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
    taskQueue: TASK_QUEUES.webhooks,
    workflowId: start.deliveryId,
    args: [{ deliveryId: start.deliveryId, mode: start.mode, trigger: start.trigger, attemptsBefore: start.attemptsBefore }],
    workflowIdReusePolicy: start.reuse === 'never' ? 'REJECT_DUPLICATE' : 'ALLOW_DUPLICATE',
    workflowIdConflictPolicy: 'FAIL',
    typedSearchAttributes: [
      { key: WorkspaceId, value: start.workspaceId },
      { key: Kind, value: 'webhook_delivery' },
    ],
    staticSummary: deliverySummary(start.deliveryId, start.mode, start.trigger, start.title),
    staticDetails: deliveryDetails(start.deliveryId, start.workspaceId),
  });
}
