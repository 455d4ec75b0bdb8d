import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { personErasureWorkflowId, type PersonErasureInput } from '../../contracts/privacy';
import { Kind, WorkspaceId } from '../../contracts/search-attributes';
import { TASK_QUEUES } from '../../contracts/task-queues';

/**
 * Starts an erasure by person, `privacy-erasure-<id>` on the ops queue (docs/decisions/0209).
 * The input names the person: the payload codec encrypts it (0200); the summary shown in the
 * Temporal UI names only the erasure and the workspace. A start repeated after a lost answer
 * finds the run started and does nothing.
 */
export async function startPersonErasure(temporal: Client, input: PersonErasureInput): Promise<void> {
  try {
    await temporal.workflow.start('personErasureWorkflow', {
      taskQueue: TASK_QUEUES.ops,
      workflowId: personErasureWorkflowId(input.erasureId),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [input],
      typedSearchAttributes: [
        { key: WorkspaceId, value: input.workspaceId },
        { key: Kind, value: 'privacy-erasure' },
      ],
      staticSummary: `erasure ${input.erasureId} of a person's data in workspace ${input.workspaceId}`,
      staticDetails: `Erases every call and batch contact about one person, in pages; progress with \`GET /api/v1/privacy/erasures/${input.erasureId}\`.`,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
