import type { Client } from '@temporalio/client';
import { newId } from '../../db/ids';
import { PrivacyErasure, type PrivacyErasureDocument } from '../../db/models/privacy-erasure';
import { openSecret, sealSecret } from '../../contracts/secret-box';
import type { ErasureSubject } from '../../contracts/privacy';
import { actorFor, creatorFor, type Caller } from '../accounts/principal';
import { recordWorkspaceAudit } from '../audit/audit-log';
import { recordEvent } from '../webhooks/fan-out';
import { HttpError } from '../shared/http-error';
import { maskedPhone } from './person-erasure';
import { startPersonErasure } from './temporal';

/** The event sent when an erasure by person has finished (it names the erasure, never the person). */
export const ERASURE_COMPLETED_EVENT = 'privacy.erasure.completed';

/** An erasure as `GET /privacy/erasures/{id}` shows it. */
export function erasureView(e: PrivacyErasureDocument) {
  return {
    id: e._id,
    status: e.status,
    phone: e.phone_masked,
    email_given: e.email_given ?? false,
    erased: {
      calls: e.calls_erased ?? 0,
      batch_contacts: e.contacts_erased ?? 0,
      events: e.events_erased ?? 0,
      webhook_deliveries: e.deliveries_erased ?? 0,
      recordings: e.recordings_erased ?? 0,
    },
    waiting: e.calls_waiting ?? 0,
    requested_by: e.requested_by?.name ?? '',
    created_at: e.created_at,
    updated_at: e.updated_at,
    completed_at: e.completed_at ?? null,
  };
}

const sameSubject = (a: ErasureSubject, b: ErasureSubject) => a.phone === b.phone && (a.email ?? null) === (b.email ?? null);

/**
 * `POST /privacy/erasures`: starts the erasure of everything about one person, or answers the
 * one already running for the same number and email (a repeated request starts nothing).
 * Answers the erasure and whether it is new.
 */
export async function requestPersonErasureAs(
  temporal: Client,
  caller: Caller,
  body: { phone: string; email?: string | null },
  at: Date,
  ip: string | null,
): Promise<{ erasure: PrivacyErasureDocument; created: boolean }> {
  const workspaceId = caller.access.workspace.id;
  const subject: ErasureSubject = { phone: body.phone, email: body.email ? body.email.trim().toLowerCase() : null };
  const running = await PrivacyErasure.find({ workspace_id: workspaceId, status: 'running' }).lean<PrivacyErasureDocument[]>();
  const same = running.find((e) => e.subject_sealed && sameSubject(JSON.parse(openSecret(e.subject_sealed)) as ErasureSubject, subject));
  if (same) {
    // Started again in case the first request's start was lost; a started run is left as it is.
    await startPersonErasure(temporal, { erasureId: same._id, workspaceId, subject });
    return { erasure: same, created: false };
  }
  const erasure = {
    _id: newId(),
    workspace_id: workspaceId,
    status: 'running' as const,
    phone_masked: maskedPhone(subject.phone),
    email_given: subject.email !== null,
    subject_sealed: sealSecret(JSON.stringify(subject)),
    requested_by: creatorFor(caller.principal),
    created_at: at,
    updated_at: at,
  };
  await PrivacyErasure.create(erasure);
  await recordWorkspaceAudit(workspaceId, {
    action: 'privacy.erasure_requested',
    actor: actorFor(caller.principal),
    target: { type: 'privacy_erasure', id: erasure._id, name: erasure.phone_masked },
    at,
    ip,
  });
  await startPersonErasure(temporal, { erasureId: erasure._id, workspaceId, subject });
  return { erasure: (await PrivacyErasure.findById(erasure._id).lean<PrivacyErasureDocument>()) as PrivacyErasureDocument, created: true };
}

export async function findErasureOf(workspaceId: string, erasureId: string): Promise<PrivacyErasureDocument> {
  const erasure = await PrivacyErasure.findById(erasureId).lean<PrivacyErasureDocument>();
  if (!erasure || erasure.workspace_id !== workspaceId) throw new HttpError(404, 'erasure not found');
  return erasure;
}

/**
 * The erasure's end: the record completed with the person's sealed details removed, an audit
 * entry, and `privacy.erasure.completed` to the workspace's endpoints (its data: the erasure's
 * id, masked number and counts). Safe to run again: the event's id is fixed by the erasure.
 */
export async function completePersonErasure(erasureId: string, waiting: number, deps: { temporal: Client; now: () => Date }): Promise<void> {
  const at = deps.now();
  // Only a running erasure is completed here: a retry finds it completed and keeps its time.
  const completedNow = await PrivacyErasure.findOneAndUpdate(
    { _id: erasureId, status: 'running' },
    { $set: { status: 'completed', subject_sealed: null, calls_waiting: waiting, updated_at: at, completed_at: at } },
  ).lean<PrivacyErasureDocument>();
  const erasure = await PrivacyErasure.findById(erasureId).lean<PrivacyErasureDocument>();
  if (!erasure) throw new Error(`erasure ${erasureId} does not exist`);
  const view = erasureView(erasure);
  if (completedNow) {
    await recordWorkspaceAudit(erasure.workspace_id, {
      action: 'privacy.erasure_completed',
      actor: { type: 'user', id: erasure.requested_by?.user_id ?? null, name: erasure.requested_by?.name ?? null },
      target: { type: 'privacy_erasure', id: erasureId, name: erasure.phone_masked },
      at,
      details: view.erased,
    });
  }
  // The erasure's own timeline (one entry): the fan-out names the event by this id and sequence 0, so a retry sends nothing twice.
  await recordEvent(
    {
      workspaceId: erasure.workspace_id,
      callId: erasureId,
      agentId: '',
      sequence: 0,
      type: ERASURE_COMPLETED_EVENT,
      message: `erasure ${erasureId} completed`,
      level: 'info',
      latencyMs: null,
      data: { erasure_id: erasureId, phone: erasure.phone_masked, erased: view.erased, waiting },
      createdAt: (erasure.completed_at ?? at).toISOString(),
    },
    deps,
  );
}
