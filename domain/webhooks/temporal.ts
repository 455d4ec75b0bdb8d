import { InternalConnectionLikeSymbol, type Client, type InternalConnectionLike, type WorkflowHandle } from '@temporalio/client';
import {
  deliveryDetails,
  retryNowUpdate,
  deliverySummary,
  type DeliveryTitle,
  type DeliveryWorkflowInput,
  type RedeliveryInput,
  type WebhookDeliveryWorkflow,
  type WebhookRedeliveryWorkflow,
} from '../../contracts/webhooks';
import { ignoreWorkflowNotFound } from '../shared/temporal';
import { Kind, WorkspaceId } from '../../contracts/search-attributes';
import { TASK_QUEUES } from '../../contracts/task-queues';

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
  /** The first attempt as a local activity (the fan-out's fast path: first-attempts.ts). */
  localFirstAttempt?: boolean;
}

/** Starts the delivery workflow `whd_<id>` on the `webhooks` queue; the workflow id is the delivery id. */
export function startDeliveryWorkflow(temporal: Client, start: StartDelivery): Promise<WorkflowHandle<WebhookDeliveryWorkflow>> {
  return temporal.workflow.start<WebhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
    taskQueue: TASK_QUEUES.webhooks,
    workflowId: start.deliveryId,
    args: [
      {
        deliveryId: start.deliveryId,
        mode: start.mode,
        trigger: start.trigger,
        attemptsBefore: start.attemptsBefore,
        ...(start.localFirstAttempt ? { firstAttempt: 'local' as const } : {}),
      },
    ],
    // Straight to a worker of this process when there is one with a free slot (the client
    // shares the worker's NativeConnection); otherwise the server dispatches it as usual.
    requestEagerStart: supportsEagerStart(temporal),
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

/** Eager start needs the client to share a worker's NativeConnection; a plain Connection refuses it. */
function supportsEagerStart(temporal: Client): boolean {
  return Boolean((temporal.connection as InternalConnectionLike)[InternalConnectionLikeSymbol]?.supportsEagerStart);
}

/** Starts the redelivery job's workflow (its id is the job's id) on the `webhooks` queue. */
export async function startRedeliveryWorkflow(temporal: Client, input: RedeliveryInput, title: { endpointUrl: string; askedBy: string }): Promise<void> {
  await temporal.workflow.start<WebhookRedeliveryWorkflow>('webhookRedeliveryWorkflow', {
    taskQueue: TASK_QUEUES.webhooks,
    workflowId: input.redeliveryId,
    args: [input],
    typedSearchAttributes: [
      { key: WorkspaceId, value: input.workspaceId },
      { key: Kind, value: 'webhook_redelivery' },
    ],
    staticSummary: `redelivery of the failed deliveries to ${title.endpointUrl} since ${input.since}`,
    staticDetails: `Redelivery \`${input.redeliveryId}\` of endpoint \`${input.endpointId}\` in workspace \`${input.workspaceId}\`, asked by ${title.askedBy}. Each failed delivery gets one manual attempt as its own workflow (\`whd_<id>\`); query \`progress\` or \`GET /api/v1/webhooks/redeliveries/${input.redeliveryId}\`.`,
  });
}

/**
 * Stops delivery or redelivery workflows. Temporal takes the cancel of an ended workflow as a
 * no-op, and answers "not found" for one never started or already past retention: both are
 * fine. Anything else is a real fault.
 */
export async function cancelWebhookWorkflows(temporal: Client, workflowIds: string[]): Promise<void> {
  await Promise.all(workflowIds.map((workflowId) => temporal.workflow.getHandle(workflowId).cancel().catch(ignoreWorkflowNotFound)));
}

/** One extra attempt through the running delivery workflow's `retryNow` update (it rejects when the run has closed). */
export async function sendRetryNow(temporal: Client, deliveryId: string): Promise<void> {
  await temporal.workflow.getHandle<WebhookDeliveryWorkflow>(deliveryId).executeUpdate(retryNowUpdate);
}
