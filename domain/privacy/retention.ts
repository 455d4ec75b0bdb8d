import { Call, FINAL_CALL_STATUSES } from '../../db/models/call';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { Workspace } from '../../db/models/workspace';
import type { RetentionKind } from '../../contracts/retention';
import { recordingsCreatedBefore } from '../calls/recording-store';
import { eraseCallDeliveryBodies, eraseCallEventTexts, eraseCallRecording } from './call-erasure';

/**
 * What the retention sweep erases (docs/decisions/0215), per workspace that sets a period:
 * `retention.recordings_days`: recordings made longer ago; `retention.transcripts_days`: the
 * words of calls created longer ago (transcript, summary, extracted values, the text of their
 * events and of their stored webhook bodies), marked `text_erased_at`. Ids, times, numbers,
 * duration, cost and status stay (billing and audit need them).
 */

const DAY_MS = 24 * 3600 * 1000;

/** Workspaces with a period for this kind, and the time before which their items expire. */
async function expiringWorkspaces(kind: RetentionKind, now: Date): Promise<{ workspaceId: string; before: Date }[]> {
  const field = kind === 'recordings' ? 'retention.recordings_days' : 'retention.transcripts_days';
  const workspaces = await Workspace.find({ [field]: { $gte: 1 } }, { retention: 1 }).lean<{ _id: string; retention?: Record<string, number | null> }[]>();
  return workspaces.map((w) => {
    const days = w.retention?.[kind === 'recordings' ? 'recordings_days' : 'transcripts_days'] as number;
    return { workspaceId: w._id, before: new Date(now.getTime() - days * DAY_MS) };
  });
}

/** Erases at most `batchSize` expired items of this kind; `more` when the batch was full. */
export async function eraseExpired(kind: RetentionKind, batchSize: number, now: Date): Promise<{ erased: number; more: boolean }> {
  let erased = 0;
  for (const { workspaceId, before } of await expiringWorkspaces(kind, now)) {
    const room = batchSize - erased;
    if (room <= 0) break;
    if (kind === 'recordings') {
      for (const callId of await recordingsCreatedBefore(workspaceId, before, room)) if (await eraseCallRecording(callId)) erased++;
    } else {
      const calls = await Call.find(
        { workspace_id: workspaceId, created_at: { $lt: before }, status: { $in: FINAL_CALL_STATUSES }, text_erased_at: null },
        { _id: 1 },
      )
        .limit(room)
        .lean();
      for (const call of calls) {
        await eraseCallWords(workspaceId, call._id, now);
        erased++;
      }
    }
  }
  return { erased, more: erased >= batchSize };
}

/**
 * The words of one call, erased wherever they are kept (the erasure primitives of 0208 for
 * the events and the delivery bodies); the record keeps `user_data` and its numbers (only its
 * words expire here). The call is marked last, so that a stopped run takes it again.
 */
export async function eraseCallWords(workspaceId: string, callId: string, now: Date): Promise<void> {
  await Call.updateOne({ _id: callId }, { $set: { transcript: [], summary: null, extracted: null, updated_at: now } });
  await eraseCallEventTexts(callId);
  await eraseCallDeliveryBodies(workspaceId, callId);
  // A delivery still under way would otherwise keep its data_storage body (0213) once over.
  await WebhookDelivery.updateMany({ workspace_id: workspaceId, call_id: callId, body_after_delivery: { $ne: null } }, { $set: { body_after_delivery: null } });
  await Call.updateOne({ _id: callId }, { $set: { text_erased_at: now } });
}
