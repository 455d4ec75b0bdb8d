import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  personErasureWorkflowId,
  WORKSPACE_CLOSURE_CANCEL_SIGNAL,
  workspaceClosureWorkflowId,
  type PersonErasureInput,
  type WorkspaceClosureInput,
} from '../../contracts/privacy';
import { RETENTION_SCHEDULE_ID, RETENTION_WORKFLOW_TYPE } from '../../contracts/retention';
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

/** How often the retention sweep runs. Periods are whole days: an hour late at most is within them. */
export const RETENTION_SWEEP_EVERY = '1 hour';

/**
 * Creates the `retention-sweep` Schedule (docs/decisions/0215) unless it exists: every hour a
 * `retentionWorkflow` run on the `ops` queue, never two at once (an overlapping start is
 * skipped), each run listed in the Temporal UI under the schedule. Called at every ops worker's
 * start: the first creates it, the others find it.
 */
export async function ensureRetentionSchedule(temporal: Client): Promise<void> {
  try {
    await temporal.schedule.create({
      scheduleId: RETENTION_SCHEDULE_ID,
      spec: { intervals: [{ every: RETENTION_SWEEP_EVERY }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      action: {
        type: 'startWorkflow',
        workflowType: RETENTION_WORKFLOW_TYPE,
        taskQueue: TASK_QUEUES.ops,
        workflowId: 'retention',
        args: [{}],
        typedSearchAttributes: [{ key: Kind, value: 'retention' }],
        staticSummary: "Retention sweep: recordings and calls' words older than their workspace's retention",
      },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}

/**
 * Starts the closing of a workspace, `workspace-closure-<closure id>` on the ops queue
 * (docs/decisions/0210): it waits out the grace period, then erases. Its input names no person.
 */
export async function startWorkspaceClosure(temporal: Client, input: WorkspaceClosureInput): Promise<void> {
  try {
    await temporal.workflow.start('workspaceClosureWorkflow', {
      taskQueue: TASK_QUEUES.ops,
      workflowId: workspaceClosureWorkflowId(input.closureId),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [input],
      typedSearchAttributes: [
        { key: WorkspaceId, value: input.workspaceId },
        { key: Kind, value: 'workspace-closure' },
      ],
      staticSummary: `closing of workspace ${input.workspaceId}: its data erased at ${input.eraseAt} unless cancelled`,
      staticDetails: 'The owner may cancel until then (`POST /api/v1/workspace/close/cancel`); invoices are kept (tax law).',
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** Tells a closure's workflow it was cancelled (already recorded on the workspace); a closed or missing run is fine. */
export async function cancelWorkspaceClosureWorkflow(temporal: Client, closureId: string): Promise<void> {
  try {
    await temporal.workflow.getHandle(workspaceClosureWorkflowId(closureId)).signal(WORKSPACE_CLOSURE_CANCEL_SIGNAL);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
