import type { Client } from '@temporalio/client';
import { Call, FINAL_CALL_STATUSES } from '../../db/models/call';
import { signalProviderStatus } from './temporal';

/**
 * What became of telling a call's workflow of an answer from the call record: `told` (the
 * workflow has it now; a repeat changes nothing there), `begun` (the record already says the
 * call went live), `not-answered` (no answer on the record), `over` (the record is final),
 * `no-workflow` (the record is live but no workflow runs the call).
 */
export type RecordedAnswerRelay = 'told' | 'begun' | 'not-answered' | 'over' | 'no-workflow';

/**
 * Tells the call's workflow of the answer the API wrote on the call record (its media node and
 * time: docs/decisions/0235), unless the record shows it knows already. The API answers the
 * provider before its own signal lands; this is how the answer still reaches the workflow, in
 * order, when that signal is late or lost: the hang-up's status relays it first, and the media
 * node that holds a stream no conversation has claimed relays it. The workflow takes the first
 * `in-progress` and ignores the others, so telling it twice is harmless.
 */
export async function relayRecordedAnswer(temporal: Client, callId: string, providerCallId: string): Promise<RecordedAnswerRelay> {
  const call = await Call.findById(callId, { status: 1, media_node_url: 1, media_node_task_queue: 1, answered_at: 1 }).lean();
  if (!call || FINAL_CALL_STATUSES.includes(call.status)) return 'over';
  if (!call.answered_at || !call.media_node_url || !call.media_node_task_queue) return 'not-answered';
  if (call.status === 'in-progress') return 'begun';
  const told = await signalProviderStatus(temporal, callId, {
    status: 'in-progress',
    providerCallId,
    at: call.answered_at.toISOString(),
    mediaNode: { url: call.media_node_url, taskQueue: call.media_node_task_queue },
  });
  return told ? 'told' : 'no-workflow';
}
