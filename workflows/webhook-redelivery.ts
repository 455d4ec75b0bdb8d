import {
  CancellationScope,
  continueAsNew,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createActivities } from '../activities';
import type { FailedDelivery } from '../contracts/webhooks';
import {
  deliveryDetails,
  deliverySummary,
  redeliveryProgressQuery,
  type DeliveryState,
  type RedeliveryInput,
  type RedeliveryProgress,
} from '../contracts/webhooks';
import { Kind, WorkspaceId } from '../contracts/search-attributes';
import { TASK_QUEUES } from '../contracts/task-queues';
import type { webhookDeliveryWorkflow } from './webhook-delivery';

const { countFailedDeliveries, listFailedDeliveries, saveRedeliveryProgress } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const PAGE_SIZE = 50;
/** Manual attempts in flight at once: enough to move quickly, few enough to spare the target. */
const PARALLEL_ATTEMPTS = 10;

/**
 * Retries every failed delivery of one endpoint created since a time (`whr_<id>`). Each is one
 * manual attempt run as the delivery's own workflow (`whd_<id>`, a new run after the closed
 * one), so its attempts and history stay in one place. Progress is saved after each page and
 * answered by the `progress` query. Canceling stops it between rounds of attempts; the round
 * in flight finishes. Long jobs continue as new
 * with their cursor and counts.
 */
export async function webhookRedeliveryWorkflow(input: RedeliveryInput): Promise<RedeliveryProgress & { total: number | null; status: string }> {
  const progress: RedeliveryProgress = input.progress ?? { cursor: null, attempted: 0, delivered: 0, failed: 0, skipped: 0 };
  let total: number | null = input.total ?? null;
  let status: 'running' | 'completed' | 'canceled' = 'running';
  setHandler(redeliveryProgressQuery, () => ({ ...progress, total, status }));

  try {
    if (total === null) setCurrentDetails(`counting the failed deliveries since ${input.since}`);
    total ??= await countFailedDeliveries({ redeliveryId: input.redeliveryId, endpointId: input.endpointId, since: input.since });
    for (;;) {
      const page = await listFailedDeliveries({ endpointId: input.endpointId, since: input.since, cursor: progress.cursor, limit: PAGE_SIZE });
      if (page.length === 0) break;
      for (let i = 0; i < page.length && !CancellationScope.current().consideredCancelled; i += PARALLEL_ATTEMPTS) {
        const round = page.slice(i, i + PARALLEL_ATTEMPTS);
        // A cancellation lets the round in flight finish: its attempts are real requests.
        await CancellationScope.nonCancellable(() => Promise.all(round.map((delivery) => redeliver(delivery, input.workspaceId, progress))));
        progress.cursor = round[round.length - 1].id;
        setCurrentDetails(`redelivering: ${progress.attempted} of ${total} attempted, ${progress.delivered} delivered`);
      }
      if (CancellationScope.current().consideredCancelled) {
        status = 'canceled';
        break;
      }
      await saveRedeliveryProgress({ redeliveryId: input.redeliveryId, progress, status });
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof webhookRedeliveryWorkflow>({ ...input, progress, total });
    }
    if (status === 'running') status = 'completed';
  } catch (error) {
    if (!isCancellation(error)) throw error;
    status = 'canceled';
  }
  await CancellationScope.nonCancellable(() => saveRedeliveryProgress({ redeliveryId: input.redeliveryId, progress, status }));
  setCurrentDetails(`${status}: ${progress.delivered} delivered, ${progress.failed} failed, ${progress.skipped} skipped`);
  return { ...progress, total, status };
}

async function redeliver(delivery: FailedDelivery, workspaceId: string, progress: RedeliveryProgress): Promise<void> {
  let child;
  try {
    child = await startChild<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
      workflowId: delivery.id,
      taskQueue: TASK_QUEUES.webhooks,
      args: [{ deliveryId: delivery.id, mode: 'once', trigger: 'manual', attemptsBefore: delivery.attemptCount }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        { key: WorkspaceId, value: workspaceId },
        { key: Kind, value: 'webhook_delivery' },
      ],
      staticSummary: deliverySummary(delivery.id, 'once', 'manual', delivery.title ?? null),
      staticDetails: deliveryDetails(delivery.id, workspaceId),
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    progress.skipped += 1; // someone is retrying it right now
    return;
  }
  const state: DeliveryState = await child.result();
  progress.attempted += 1;
  if (state.status === 'delivered') progress.delivered += 1;
  else progress.failed += 1;
}
