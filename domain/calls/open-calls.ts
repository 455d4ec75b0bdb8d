import { QUEUE_EXPIRY_MS } from '../../contracts/calls';
import type { CallStatus } from '../../contracts/call-statuses';
import { FINAL_CALL_STATUSES, LIVE_CALL_STATUSES } from '../../db/models/call';
import { OpenCall } from '../../db/models/open-call';

/**
 * The calls not yet ended, kept beside their records (db/models/open-call.ts, docs/decisions/0231)
 * so that counting a workspace's live and queued calls reads a few small documents, not every
 * call ever made.
 */

/** Longer than any call stays open: the queue's 24 hours, the longest call (an hour), a transfer, and some. */
export const OPEN_CALL_LONGEST_MS = QUEUE_EXPIRY_MS + 6 * 60 * 60 * 1000;

/** A call that now exists and has not ended: its entry, once (a retried insert changes nothing). */
export async function openCall(callId: string, workspaceId: string, status: CallStatus, since: Date): Promise<void> {
  await OpenCall.updateOne({ _id: callId }, { $setOnInsert: { workspace_id: workspaceId, status, since } }, { upsert: true });
}

/**
 * The call's new status, beside the one its record now has: an ended call leaves. A call placed
 * before open calls were kept has no entry, and none is made (it is not counted until it ends).
 */
export async function followCallStatus(callId: string, status: CallStatus): Promise<void> {
  if (FINAL_CALL_STATUSES.includes(status)) await OpenCall.deleteOne({ _id: callId });
  else await OpenCall.updateOne({ _id: callId }, { $set: { status } });
}

/** The workspace's live calls (ringing or in progress) and queued calls, as their records say. */
export async function openCallCounts(workspaceId: string, now: Date): Promise<{ live: number; queued: number }> {
  const open = await OpenCall.find({ workspace_id: workspaceId, since: stillOpenSince(now) }, { status: 1 }).lean();
  return {
    live: open.filter((call) => LIVE_CALL_STATUSES.includes(call.status as CallStatus)).length,
    queued: open.filter((call) => call.status === 'queued').length,
  };
}

/** The queued calls of every workspace (the API's `voice_agents_queued_calls` gauge, read at scrape). */
export async function queuedCallsEverywhere(now: Date): Promise<number> {
  return OpenCall.countDocuments({ status: 'queued', since: stillOpenSince(now) });
}

/** Entries younger than any call stays open: older ones were left behind and no longer count. */
function stillOpenSince(now: Date): { $gte: Date } {
  return { $gte: new Date(now.getTime() - OPEN_CALL_LONGEST_MS) };
}
