import type { Client } from '@temporalio/client';
import { callWorkflowId } from '../../contracts/calls';

/**
 * The local activities a call's workflow has run so far, in order, by type (`queueCall`,
 * `closeCall`, `releaseSlot`...), read from the markers in its history: which of two steps
 * came first is not visible through the API.
 */
export async function localStepsOf(client: Client, callId: string): Promise<string[]> {
  const { events } = await client.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
  const steps: string[] = [];
  for (const event of events ?? []) {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
    if (data) steps.push((JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string }).activity_type);
  }
  return steps;
}
