import { newId } from '../../db/ids';
import { AuditEvent } from '../../db/models/audit-event';
import { Membership } from '../../db/models/membership';

export interface AuditActor {
  type: 'user' | 'api_key' | 'oauth_app' | 'staff' | 'anonymous';
  id: string | null;
  name: string | null;
}

export interface AuditTarget {
  type: string;
  id: string | null;
  name?: string | null;
}

export interface AuditRecord {
  action: string;
  actor: AuditActor;
  target: AuditTarget;
  at: Date;
  ip?: string | null;
  details?: Record<string, unknown>;
}

/** Records an event in one workspace's audit log. */
export async function recordWorkspaceAudit(workspaceId: string | null, record: AuditRecord): Promise<void> {
  await AuditEvent.create(toDocument(workspaceId, record));
}

/**
 * Records an event about a person (sign-in, password change) in the audit log of every
 * workspace they belong to, or once without a workspace when they belong to none.
 */
export async function recordUserAudit(userId: string, record: AuditRecord): Promise<void> {
  const memberships = await Membership.find({ user_id: userId }, { workspace_id: 1 }).lean();
  const workspaceIds = memberships.length ? memberships.map((m) => m.workspace_id) : [null];
  await AuditEvent.insertMany(workspaceIds.map((id) => toDocument(id, record)));
}

function toDocument(workspaceId: string | null, record: AuditRecord) {
  return {
    _id: newId(),
    workspace_id: workspaceId,
    at: record.at,
    action: record.action,
    actor: record.actor,
    target: { type: record.target.type, id: record.target.id, name: record.target.name ?? null },
    ip: record.ip ?? null,
    details: record.details ?? {},
  };
}
