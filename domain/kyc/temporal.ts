import type { Client } from '@temporalio/client';
import { workflowIds } from '../../workflows/shared/ids';
import type { KycReviewInput, KycReviewWorkflow } from '../../workflows/shared/kyc';
import { Kind, WorkspaceId } from '../../workflows/shared/search-attributes';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';

/**
 * Starts the workspace's review `kyc-<workspace_id>` on the ops queue: one open review per
 * workspace (WorkflowExecutionAlreadyStartedError while one runs); a closed one (rejected) may
 * be followed by a new run.
 */
export async function startKycReview(temporal: Client, input: KycReviewInput, title: { workspaceName: string; submitterEmail: string }): Promise<void> {
  await temporal.workflow.start<KycReviewWorkflow>('kycReviewWorkflow', {
    taskQueue: TASK_QUEUES.ops,
    workflowId: workflowIds.kyc(input.workspaceId),
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    args: [input],
    typedSearchAttributes: [
      { key: WorkspaceId, value: input.workspaceId },
      { key: Kind, value: 'kyc' },
    ],
    staticSummary: `KYC review of workspace ${input.workspaceId} (${title.workspaceName})`,
    staticDetails: `Submitted by ${input.submittedBy.name} (${title.submitterEmail}). Staff decide with \`npm run kyc:approve -- ${input.workspaceId}\` or \`npm run kyc:reject -- ${input.workspaceId} "<reason>"\`.`,
  });
}
