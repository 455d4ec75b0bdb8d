import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const { EventType, WorkflowTaskFailedCause } = temporal.api.enums.v1;

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A run's history, and each event's time as seconds from the run's first event ("+3.2 s"). */
async function historyOf(client: Client, workflowId: string): Promise<{ events: HistoryEvent[]; since: (event: HistoryEvent) => string }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const secondsOf = (event: HistoryEvent | undefined) => Number(event?.eventTime?.seconds ?? 0) + (event?.eventTime?.nanos ?? 0) / 1e9;
  const start = secondsOf(events[0]);
  return { events, since: (event) => `+${(secondsOf(event) - start).toFixed(1)} s` };
}

/**
 * The workflow tasks of a run that failed or timed out, one line each with its cause, for a
 * failure's story: a task that did not complete is run again, and so are the local activities
 * it ran (a dial among them).
 */
export async function workflowTaskTroubles(client: Client, workflowId: string): Promise<string[]> {
  const { events, since } = await historyOf(client, workflowId);
  return events.flatMap((event) => {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
      const cause = WorkflowTaskFailedCause[event.workflowTaskFailedEventAttributes?.cause ?? 0];
      return [`  ${since(event)} workflow task failed: ${cause} ${event.workflowTaskFailedEventAttributes?.failure?.message ?? ''}`];
    }
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)
      return [`  ${since(event)} workflow task timed out (${event.workflowTaskTimedOutEventAttributes?.timeoutType})`];
    return [];
  });
}

/**
 * An activity's life in a run's history, one line per event (scheduled on which queue, started
 * by which worker, and how it closed), for a failure's story: where a call's conversation ran
 * and when it ended. `nodeOf` names a worker by its identity.
 */
export async function activityEvents(client: Client, workflowId: string, activityType: string, nodeOf: (identity: string) => string): Promise<string[]> {
  const { events, since } = await historyOf(client, workflowId);
  const scheduled = new Set<string>();
  const lines: string[] = [];
  for (const event of events) {
    const id = String(event.eventId);
    const at = since(event);
    const scheduledAttributes = event.activityTaskScheduledEventAttributes;
    if (scheduledAttributes?.activityType?.name === activityType) {
      scheduled.add(id);
      lines.push(`  ${at} ${activityType} scheduled on ${scheduledAttributes.taskQueue?.name}`);
      continue;
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started && scheduled.has(String(started.scheduledEventId))) {
      lines.push(`  ${at} ${activityType} started by ${nodeOf(started.identity ?? '')} (attempt ${started.attempt})`);
      continue;
    }
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (closed && scheduled.has(String(closed.scheduledEventId))) {
      const failure = event.activityTaskFailedEventAttributes?.failure ?? event.activityTaskTimedOutEventAttributes?.failure;
      const beat = event.activityTaskTimedOutEventAttributes
        ? `, last heartbeat details: ${failure?.timeoutFailureInfo?.lastHeartbeatDetails ? 'some' : 'none'}`
        : '';
      lines.push(
        `  ${at} ${activityType} ${EventType[event.eventType ?? 0]?.replace('EVENT_TYPE_ACTIVITY_TASK_', '').toLowerCase()}${failure ? `: ${failure.message}` : ''}${beat}`,
      );
    }
  }
  return lines;
}
