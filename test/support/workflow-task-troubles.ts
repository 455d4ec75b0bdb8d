import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const { EventType } = temporal.api.enums.v1;

/**
 * The workflow tasks of a run that failed or timed out, one line each with its cause, for a
 * failure's story: a task that did not complete is run again, and so are the local activities
 * it ran (a dial among them).
 */
export async function workflowTaskTroubles(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const start = Number(events[0]?.eventTime?.seconds ?? 0);
  const since = (seconds: unknown) => `+${(Number(seconds ?? 0) - start).toFixed(0)} s`;
  const { WorkflowTaskFailedCause } = temporal.api.enums.v1;
  return events.flatMap((event) => {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
      const cause = WorkflowTaskFailedCause[event.workflowTaskFailedEventAttributes?.cause ?? 0];
      return [`  ${since(event.eventTime?.seconds)} workflow task failed: ${cause} ${event.workflowTaskFailedEventAttributes?.failure?.message ?? ''}`];
    }
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)
      return [`  ${since(event.eventTime?.seconds)} workflow task timed out (${event.workflowTaskTimedOutEventAttributes?.timeoutType})`];
    return [];
  });
}
