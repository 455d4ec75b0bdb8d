import type { Client } from '@temporalio/client';
import { newId } from '../../db/ids';
import { ApiKey } from '../../db/models/api-key';
import { AuditEvent } from '../../db/models/audit-event';
import { BatchContact } from '../../db/models/batch-contact';
import { Call, type CallDocument } from '../../db/models/call';
import { DoNotCall } from '../../db/models/do-not-call';
import { Invite } from '../../db/models/invite';
import { KnowledgeBase } from '../../db/models/knowledge-base';
import { Membership } from '../../db/models/membership';
import { OAuthRefreshToken } from '../../db/models/oauth-refresh-token';
import { OAuthToken } from '../../db/models/oauth-token';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { Workspace, type WorkspaceDocument } from '../../db/models/workspace';
import { ERASURE_PAGE_SIZE, type WorkspaceErasurePage, type WorkspaceErasureStep } from '../../contracts/privacy';
import { actorFor, creatorFor, type Caller } from '../accounts/principal';
import { recordWorkspaceAudit } from '../audit/audit-log';
import { deleteKnowledgeBase } from '../knowledge/bases';
import { eraseKycDocumentBytes } from '../kyc/document-retention';
import { HttpError } from '../shared/http-error';
import { eraseCall, eraseDeliveryBody, isErasable } from './call-erasure';
import { eraseBatchContact, FINAL_CONTACT_STATUSES } from './person-erasure';
import { cancelWorkspaceClosureWorkflow, startWorkspaceClosure } from './temporal';

/**
 * Closing a workspace (docs/decisions/0210): the owner asks, a grace period passes (cancellable),
 * then the workflow `workspace-closure-<id>` erases the workspace's data as an erasure by person
 * does, step by step, keeping what tax law requires (invoices and the ledger they come from).
 * The workspace record's `closure` is the one truth of where it stands: the API's cancel and the
 * workflow's start of erasure are guarded updates of it, so exactly one of them wins.
 */

type Closure = NonNullable<WorkspaceDocument['closure']>;

/** What a view reads of a closure. */
export interface ClosureFields {
  status: string;
  requested_at: Date;
  requested_by?: { name?: string | null } | null;
  erase_at: Date;
  erased_at?: Date | null;
}

/** The closure as `GET /workspace` and `POST /workspace/close` show it; null when not closing. */
export function closureView(closure: ClosureFields | null | undefined) {
  if (!closure) return null;
  return {
    status: closure.status,
    requested_at: closure.requested_at,
    requested_by: closure.requested_by?.name ?? '',
    erase_at: closure.erase_at,
    erased_at: closure.erased_at ?? null,
  };
}

const closureOf = async (workspaceId: string): Promise<Closure | null> =>
  ((await Workspace.findById(workspaceId, { closure: 1 }).lean())?.closure as Closure | null | undefined) ?? null;

/**
 * `POST /workspace/close`: schedules the erasure `graceSeconds` from now and starts its workflow.
 * Asked again while scheduled: the same closure (its time unchanged). Once erasing: 409.
 */
export async function requestWorkspaceClosureAs(
  temporal: Client,
  caller: Caller,
  graceSeconds: number,
  at: Date,
  ip: string | null,
): Promise<{ closure: Closure; created: boolean }> {
  const workspaceId = caller.access.workspace.id;
  const closure: Closure = {
    id: newId(),
    status: 'scheduled',
    requested_at: at,
    requested_by: creatorFor(caller.principal),
    erase_at: new Date(at.getTime() + graceSeconds * 1000),
    erased_at: null,
  };
  // Only a workspace that is not closing takes a new closure (FerretDB: `null` matches a missing field too).
  const taken = await Workspace.findOneAndUpdate({ _id: workspaceId, closure: null }, { $set: { closure, updated_at: at } }).lean();
  if (!taken) {
    const current = await closureOf(workspaceId);
    if (!current) throw new HttpError(404, 'workspace not found');
    if (current.status !== 'scheduled')
      throw new HttpError(409, `the workspace's data is already being erased (${current.status}); it can no longer be closed or reopened`);
    // Started again in case the first request's start was lost; a started run is left as it is.
    await startWorkspaceClosure(temporal, { closureId: current.id, workspaceId, eraseAt: current.erase_at.toISOString() });
    return { closure: current, created: false };
  }
  await recordWorkspaceAudit(workspaceId, {
    action: 'workspace.close_requested',
    actor: actorFor(caller.principal),
    target: { type: 'workspace', id: workspaceId, name: caller.access.workspace.name },
    at,
    ip,
    details: { closure_id: closure.id, erase_at: closure.erase_at.toISOString() },
  });
  await startWorkspaceClosure(temporal, { closureId: closure.id, workspaceId, eraseAt: closure.erase_at.toISOString() });
  return { closure, created: true };
}

/** `POST /workspace/close/cancel`: ends a scheduled closure (nothing has been erased); 409 when not closing or already erasing. */
export async function cancelWorkspaceClosureAs(temporal: Client, caller: Caller, at: Date, ip: string | null): Promise<void> {
  const workspaceId = caller.access.workspace.id;
  const before = await Workspace.findOneAndUpdate({ _id: workspaceId, 'closure.status': 'scheduled' }, { $set: { closure: null, updated_at: at } }).lean();
  const canceled = before?.closure as Closure | null | undefined;
  if (!canceled) {
    const current = await closureOf(workspaceId);
    if (!current) throw new HttpError(409, 'the workspace is not closing: there is nothing to cancel');
    throw new HttpError(409, `too late to cancel: the workspace's data is ${current.status === 'erased' ? 'erased' : 'being erased'}`);
  }
  await recordWorkspaceAudit(workspaceId, {
    action: 'workspace.close_canceled',
    actor: actorFor(caller.principal),
    target: { type: 'workspace', id: workspaceId, name: caller.access.workspace.name },
    at,
    ip,
    details: { closure_id: canceled.id, erase_at: canceled.erase_at.toISOString() },
  });
  // The workflow would find the closure gone when its timer fires anyway; the signal ends it now.
  await cancelWorkspaceClosureWorkflow(temporal, canceled.id);
}

/**
 * The end of the grace period: the closure moves from `scheduled` to `erasing` (from then on it
 * cannot be cancelled). False when the owner cancelled it meanwhile (the closure is gone, or a
 * later one has its own id). A retry finds it erasing and answers true.
 */
export async function beginWorkspaceErasure(workspaceId: string, closureId: string, at: Date): Promise<boolean> {
  await Workspace.updateOne(
    { _id: workspaceId, 'closure.id': closureId, 'closure.status': 'scheduled' },
    { $set: { 'closure.status': 'erasing', updated_at: at } },
  );
  const closure = await closureOf(workspaceId);
  return closure?.id === closureId && closure.status !== 'scheduled';
}

const page = (ids: string[], erased: number, waiting: number): WorkspaceErasurePage => ({
  nextAfter: ids.length === ERASURE_PAGE_SIZE ? ids[ids.length - 1]! : null,
  erased,
  waiting,
});
const after$ = (after: string | null) => (after ? { _id: { $gt: after } } : {});

/** One page of one step of a workspace's erasure (see WORKSPACE_ERASURE_STEPS). Each page is safe to run again. */
export async function eraseWorkspacePage(workspaceId: string, step: WorkspaceErasureStep, after: string | null, at: Date): Promise<WorkspaceErasurePage> {
  switch (step) {
    case 'calls': {
      const calls = await Call.find({ workspace_id: workspaceId, ...after$(after) })
        .sort({ _id: 1 })
        .limit(ERASURE_PAGE_SIZE)
        .lean<CallDocument[]>();
      let erased = 0;
      let waiting = 0;
      for (const call of calls) {
        if (call.erased_at) continue; // erased to the end: the record is the last part erased
        if (!isErasable(call.status)) waiting++;
        else {
          await eraseCall(call, at);
          erased++;
        }
      }
      return page(
        calls.map((c) => c._id),
        erased,
        waiting,
      );
    }
    case 'contacts': {
      const contacts = await BatchContact.find({ workspace_id: workspaceId, ...after$(after) }, { number: 1, user_data: 1, status: 1 })
        .sort({ _id: 1 })
        .limit(ERASURE_PAGE_SIZE)
        .lean();
      let erased = 0;
      let waiting = 0;
      for (const contact of contacts) {
        if (!FINAL_CONTACT_STATUSES.includes(contact.status)) waiting++;
        else if (contact.number !== '' || Object.keys(contact.user_data ?? {}).length) {
          await eraseBatchContact(contact._id, at);
          erased++;
        }
      }
      return page(
        contacts.map((c) => c._id),
        erased,
        waiting,
      );
    }
    case 'deliveries': {
      // Every stored body, the call's and the workspace's own events' (an erasure's, a test's) alike.
      const deliveries = await WebhookDelivery.find({ workspace_id: workspaceId, ...after$(after) }, { request_body: 1, last_response: 1 })
        .sort({ _id: 1 })
        .limit(ERASURE_PAGE_SIZE)
        .lean();
      let erased = 0;
      for (const delivery of deliveries) if (await eraseDeliveryBody(delivery)) erased++;
      return page(
        deliveries.map((d) => d._id),
        erased,
        0,
      );
    }
    case 'knowledge': {
      // Deleted whole (their documents' text is all they hold); the next page starts again from the first left.
      const bases = await KnowledgeBase.find({ workspace_id: workspaceId }, { _id: 1 }).sort({ _id: 1 }).limit(ERASURE_PAGE_SIZE).lean();
      for (const base of bases) await deleteKnowledgeBase(workspaceId, base._id);
      return { nextAfter: bases.length === ERASURE_PAGE_SIZE ? bases[bases.length - 1]!._id : null, erased: bases.length, waiting: 0 };
    }
    case 'kyc':
      return { nextAfter: null, erased: await eraseKycDocumentBytes(workspaceId, {}, at), waiting: 0 };
    case 'do_not_call': {
      // The numbers on it are callers' (and their reasons): with no one left to call them, the list has no purpose.
      // The audit log is kept, so its entries about the list keep what was done and by whom, not the number or reason.
      await AuditEvent.updateMany(
        { workspace_id: workspaceId, action: /^do_not_call\./, 'target.type': 'do_not_call' },
        { $set: { 'target.name': null, 'details.reason': null } },
      );
      return { nextAfter: null, erased: (await DoNotCall.deleteMany({ workspace_id: workspaceId })).deletedCount, waiting: 0 };
    }
    case 'access':
      return { nextAfter: null, erased: await removeAccess(workspaceId, at), waiting: 0 };
  }
}

/** No one acts in the workspace any more: keys, apps' tokens and invites revoked, members removed. Answers the members removed. */
async function removeAccess(workspaceId: string, at: Date): Promise<number> {
  await ApiKey.updateMany({ workspace_id: workspaceId, revoked_at: null }, { $set: { revoked_at: at } });
  await OAuthToken.updateMany({ workspace_id: workspaceId, revoked_at: null }, { $set: { revoked_at: at } });
  await OAuthRefreshToken.updateMany({ workspace_id: workspaceId, revoked_at: null }, { $set: { revoked_at: at, revoked_reason: 'workspace_closed' } });
  await Invite.updateMany({ workspace_id: workspaceId, status: 'pending' }, { $set: { status: 'revoked' } });
  return (await Membership.deleteMany({ workspace_id: workspaceId })).deletedCount;
}

/** The closure's end: `erased`, audited once with what was erased (members were removed: the actor is who asked). */
export async function completeWorkspaceErasure(
  workspaceId: string,
  closureId: string,
  erased: Record<WorkspaceErasureStep, number>,
  waiting: number,
  at: Date,
): Promise<void> {
  const before = await Workspace.findOneAndUpdate(
    { _id: workspaceId, 'closure.id': closureId, 'closure.status': 'erasing' },
    { $set: { 'closure.status': 'erased', 'closure.erased_at': at, updated_at: at } },
  ).lean();
  const closure = before?.closure as Closure | null | undefined;
  if (!closure) return; // a retry: already erased
  await recordWorkspaceAudit(workspaceId, {
    action: 'workspace.erased',
    actor: { type: 'user', id: closure.requested_by?.user_id ?? null, name: closure.requested_by?.name ?? null },
    target: { type: 'workspace', id: workspaceId, name: before?.name },
    at,
    details: {
      closure_id: closureId,
      calls: erased.calls,
      batch_contacts: erased.contacts,
      webhook_deliveries: erased.deliveries,
      knowledge_bases: erased.knowledge,
      kyc_documents: erased.kyc,
      do_not_call_numbers: erased.do_not_call,
      members_removed: erased.access,
      still_live: waiting,
    },
  });
}
