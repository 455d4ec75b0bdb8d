import type { Client } from '@temporalio/client';
import type { CallDocument } from '../../db/models/call';
import { actorFor, type Caller } from '../accounts/principal';
import { recordWorkspaceAudit } from '../audit/audit-log';
import { findCallOf } from '../calls/call-actions';
import { callWorkflowsEnded } from '../calls/temporal';
import { HttpError } from '../shared/http-error';
import { eraseCall, isErasable, type CallErasureResult } from './call-erasure';

/**
 * Why a call cannot be erased now, or null: a queued or live call (its workflow still writes
 * the transcript and the events), or a final one whose workflow is still running its post-call
 * work (analytics, then `call.completed`, which carries the transcript).
 */
export async function notErasableReason(temporal: Client, call: Pick<CallDocument, '_id' | 'status'>): Promise<string | null> {
  if (!isErasable(call.status)) return `the call is ${call.status}: a queued or live call cannot be erased; cancel or hang it up first`;
  const [ended] = await callWorkflowsEnded(temporal, [call._id]);
  if (!ended) return 'the call has ended but its post-call work (analytics, call.completed) is still running; try again in a minute';
  return null;
}

/**
 * `DELETE /calls/{id}` (docs/decisions/0208): erases the call's personal data and answers
 * the record as it is left. Erasing an erased call runs every step again (a crash may have
 * stopped the first half-way) and audits only the first erasure.
 */
export async function eraseCallAs(
  temporal: Client,
  caller: Caller,
  callId: string,
  at: Date,
  ip: string | null,
): Promise<{ call: CallDocument; erased: CallErasureResult }> {
  const workspaceId = caller.access.workspace.id;
  const call = await findCallOf(workspaceId, callId);
  const refusal = await notErasableReason(temporal, call);
  if (refusal) throw new HttpError(409, refusal);
  const erased = await eraseCall(call, at);
  if (!call.erased_at) {
    await recordWorkspaceAudit(workspaceId, {
      action: 'call.erased',
      actor: actorFor(caller.principal),
      target: { type: 'call', id: call._id },
      at,
      ip,
      details: { recording: erased.recording, events: erased.events, deliveries: erased.deliveries },
    });
  }
  return { call: await findCallOf(workspaceId, callId), erased };
}
