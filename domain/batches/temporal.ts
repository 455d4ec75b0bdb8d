import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { batchWorkflowId, type BatchWorkflow, type BatchWorkflowInput } from '../../contracts/batches';
import { AgentId, Kind, WorkspaceId } from '../../contracts/search-attributes';
import { TASK_QUEUES } from '../../contracts/task-queues';

/** What the Temporal UI shows of a batch: who made it, from what, and how it retries. */
export interface BatchTitle {
  name: string;
  agentName: string;
  fromNumber: string;
  createdBy: string;
  fileName: string;
  retry: { max_attempts: number; spacing_seconds: number };
}

/** Starts `batch-<id>` on the calls queue. */
export async function startBatchWorkflow(temporal: Client, input: BatchWorkflowInput, title: BatchTitle): Promise<void> {
  const { batchId, workspaceId, agentId, contactsTotal, startAt } = input;
  await temporal.workflow.start<BatchWorkflow>('batchWorkflow', {
    taskQueue: TASK_QUEUES.calls,
    workflowId: batchWorkflowId(batchId),
    args: [input],
    typedSearchAttributes: [
      { key: WorkspaceId, value: workspaceId },
      { key: AgentId, value: agentId },
      { key: Kind, value: 'batch' },
    ],
    staticSummary: `batch "${title.name}" of ${contactsTotal} contacts with ${title.agentName}, from ${title.fromNumber}`,
    staticDetails: [
      `Batch \`${batchId}\` of workspace \`${workspaceId}\`, created by ${title.createdBy} from ${title.fileName}${startAt ? `, starting at ${startAt}` : ''}.`,
      `Up to ${title.retry.max_attempts} attempts per contact, ${title.retry.spacing_seconds} s apart. Its calls are its children (\`call-<call_id>\`); \`GET /api/v1/batches/${batchId}\` shows its counts.`,
    ].join('\n'),
  });
}

/** Pause, resume or cancel through the batch's update; a batch that ended meanwhile is left as it ended. */
export async function controlBatch(temporal: Client, batchId: string, update: UpdateDefinition<unknown, [{ by: string }]>, by: string): Promise<void> {
  try {
    await temporal.workflow.getHandle(batchWorkflowId(batchId)).executeUpdate(update, { args: [{ by }] });
  } catch (error) {
    // The workflow ended between the read and the update: the caller answers what it left.
    if (!(error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError)) throw error;
  }
}
