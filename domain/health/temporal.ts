import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { RoundTripWorkflow } from '../../contracts/roundtrip';
import { workflowIds } from '../../contracts/ids';
import { Kind } from '../../contracts/search-attributes';
import { TASK_QUEUES } from '../../contracts/task-queues';

/**
 * Starts the round-trip probe `roundtrip-<probe_id>` on the ops queue (`POST /health/roundtrip`):
 * a workflow that writes to MongoDB through an activity and waits on a durable timer, so that
 * its answer proves the API, Temporal, a worker and the store all work together.
 */
export async function startRoundTripProbe(
  temporal: Client,
  probe: { probeId: string; note: string; delaySeconds: number },
): Promise<WorkflowHandleWithFirstExecutionRunId<RoundTripWorkflow>> {
  return temporal.workflow.start<RoundTripWorkflow>('roundTripWorkflow', {
    taskQueue: TASK_QUEUES.ops,
    workflowId: workflowIds.roundTrip(probe.probeId),
    workflowIdConflictPolicy: 'FAIL', // a fresh random id: a conflict would be a bug
    workflowExecutionTimeout: '5 minutes',
    args: [probe],
    typedSearchAttributes: [{ key: Kind, value: 'probe' }],
    staticSummary: `round-trip probe ${probe.probeId}`,
  });
}
