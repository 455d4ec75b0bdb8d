import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { workflowIds } from '../../contracts/ids';
import { approveSignal, rejectSignal, stateQuery, type KycReviewInput, type KycReviewState, type KycReviewWorkflow } from '../../contracts/kyc';
import { Kind, WorkspaceId } from '../../contracts/search-attributes';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { resultWithin } from '../shared/temporal';

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

/** A staff decision on the open review (`scripts/kyc-decision.ts`); `by` names the staff member. */
export type KycDecision = { action: 'approve'; by: string } | { action: 'reject'; by: string; reason: string };

/**
 * Sends the decision as the `approve` or `reject` signal, after checking in clear words the
 * cases where the signal would fail or be ignored: no review, a closed run, a decided one.
 */
export async function sendKycDecision(temporal: Client, workspaceId: string, decision: KycDecision): Promise<void> {
  const workflowId = workflowIds.kyc(workspaceId);
  const handle = temporal.workflow.getHandle<KycReviewWorkflow>(workflowId);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      throw new Error(
        `no KYC review for this workspace: workflow ${workflowId} does not exist in namespace "${temporal.options.namespace}" (has the owner submitted the business details?)`,
      );
    }
    throw err;
  }
  if (status !== 'RUNNING') {
    throw new Error(
      `workflow ${workflowId} is not waiting for a decision: its latest run is ${status}${status === 'COMPLETED' ? ' (already decided; a new submission starts a new run)' : ''}`,
    );
  }
  const state = await handle.query(stateQuery);
  if (state.decidedBy) throw new Error(`workflow ${workflowId} has already been decided (${state.status} by ${state.decidedBy})`);
  if (decision.action === 'approve') await handle.signal(approveSignal, { by: decision.by });
  else await handle.signal(rejectSignal, { by: decision.by, reason: decision.reason });
}

/** The review's final state once a worker has applied the decision, or undefined after `ms` (e.g. no worker runs). */
export async function kycReviewOutcomeWithin(temporal: Client, workspaceId: string, ms: number): Promise<KycReviewState | undefined> {
  const handle = temporal.workflow.getHandle<KycReviewWorkflow>(workflowIds.kyc(workspaceId));
  return resultWithin(temporal, () => handle.result(), ms);
}
