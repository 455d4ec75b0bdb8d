import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { Kind } from '../../contracts/search-attributes';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { RETENTION_SCHEDULE_ID, RETENTION_WORKFLOW_TYPE } from '../../contracts/retention';

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
