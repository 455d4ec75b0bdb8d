import { Router, type Request, type Response } from 'express';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { Membership } from '../../db/models/membership';
import { OAuthToken } from '../../db/models/oauth-token';
import { User } from '../../db/models/user';
import { Workspace } from '../../db/models/workspace';
import { actorOf, workspaceAccessOf } from '../auth/context';
import type { AuthDeps } from '../auth/deps';
import type { Role } from '../../domain/accounts/permissions';
import { clientIp } from '../auth/sessions';
import { HttpError } from '../../domain/shared/http-error';
import { workspaceView } from '../views';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type WorkspaceUpdate = operations['updateWorkspace']['requestBody']['content']['application/json'];
type ChangeRole = operations['changeMemberRole']['requestBody']['content']['application/json'];

/** The workspace itself and its members. */
export function workspaceRoutes(deps: AuthDeps): Router {
  const router = apiRouter();

  router.get('/workspace', async (_req, res) => {
    const { workspace, role } = workspaceAccessOf(res);
    const stored = await Workspace.findById(workspace.id).lean();
    if (!stored) throw new HttpError(404, 'workspace not found');
    res.json(workspaceView(stored, role));
  });

  router.patch('/workspace', async (req, res) => {
    const { workspace, role } = workspaceAccessOf(res);
    const { name, compliance, retention } = req.body as WorkspaceUpdate;
    const before = await Workspace.findById(workspace.id, { compliance: 1, retention: 1 }).lean();
    const set: Record<string, unknown> = { updated_at: deps.now() };
    if (name !== undefined) set.name = name.trim();
    if (compliance?.india_calling_hours !== undefined) set['compliance.india_calling_hours'] = compliance.india_calling_hours;
    for (const field of ['recordings_days', 'transcripts_days'] as const) if (retention?.[field] !== undefined) set[`retention.${field}`] = retention[field];
    const updated = await Workspace.findOneAndUpdate({ _id: workspace.id }, { $set: set }, { returnDocument: 'after' }).lean();
    if (!updated) throw new HttpError(404, 'workspace not found');
    deps.workspaces.forget(workspace.id); // keyed requests through this process see the new name at once
    if (name !== undefined && updated.name !== workspace.name) {
      await audit(req, res, 'workspace.renamed', { type: 'workspace', id: workspace.id, name: updated.name }, { from: workspace.name, to: updated.name });
    }
    const wasOn = before?.compliance?.india_calling_hours === true;
    if (compliance?.india_calling_hours !== undefined && compliance.india_calling_hours !== wasOn) {
      await audit(
        req,
        res,
        'workspace.compliance_changed',
        { type: 'workspace', id: workspace.id, name: updated.name },
        { india_calling_hours: { from: wasOn, to: compliance.india_calling_hours } },
      );
    }
    const changed = Object.fromEntries(
      (['recordings_days', 'transcripts_days'] as const)
        .filter((field) => retention?.[field] !== undefined && retention[field] !== (before?.retention?.[field] ?? null))
        .map((field) => [field, { from: before?.retention?.[field] ?? null, to: retention![field] }]),
    );
    if (Object.keys(changed).length) {
      await audit(req, res, 'workspace.retention_changed', { type: 'workspace', id: workspace.id, name: updated.name }, changed);
    }
    res.json(workspaceView(updated, role));
  });

  router.get('/members', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const memberships = await Membership.find({ workspace_id: workspace.id }).sort({ joined_at: 1, _id: 1 }).lean();
    const users = await User.find({ _id: { $in: memberships.map((m) => m.user_id) } }, { name: 1, email: 1 }).lean();
    const byId = new Map(users.map((u) => [u._id, u]));
    res.json(memberships.flatMap((m) => (byId.has(m.user_id) ? [memberView(m, byId.get(m.user_id)!)] : [])));
  });

  router.patch('/members/:user_id', async (req, res) => {
    const { workspace, role: callerRole } = workspaceAccessOf(res);
    const { role } = req.body as ChangeRole;
    const { membership, user } = await findMember(workspace.id, req.params.user_id as string);
    const from = membership.role as Role;
    assertMayTouchOwners(callerRole, from, role);
    if (from !== role) {
      if (from === 'owner') await assertAnotherOwner(workspace.id);
      const changed = await Membership.findOneAndUpdate({ _id: membership._id, role: from }, { $set: { role } }, { returnDocument: 'after' }).lean();
      if (!changed) throw new HttpError(409, 'the member changed meanwhile; reload and try again');
      if (from === 'owner' && (await Membership.countDocuments({ workspace_id: workspace.id, role: 'owner' })) === 0) {
        // Two owners demoted each other at the same moment: undo ours so an owner remains.
        await Membership.updateOne({ _id: membership._id }, { $set: { role: 'owner' } });
        throw new HttpError(400, 'a workspace always needs an owner; make another member owner first');
      }
      await audit(req, res, 'member.role_changed', { type: 'user', id: user._id, name: user.email }, { from, to: role });
    }
    res.json(memberView({ ...membership, role }, user));
  });

  router.delete('/members/:user_id', async (req, res) => {
    const { workspace, role: callerRole } = workspaceAccessOf(res);
    const { membership, user } = await findMember(workspace.id, req.params.user_id as string);
    assertMayTouchOwners(callerRole, membership.role as Role, null);
    if (membership.role === 'owner') await assertAnotherOwner(workspace.id);
    await Membership.deleteOne({ _id: membership._id });
    if (membership.role === 'owner' && (await Membership.countDocuments({ workspace_id: workspace.id, role: 'owner' })) === 0) {
      await Membership.create(membership);
      throw new HttpError(400, 'a workspace always needs an owner; make another member owner first');
    }
    // Apps the person connected act as them: they stop with the membership.
    await OAuthToken.updateMany({ workspace_id: workspace.id, user_id: user._id, revoked_at: null }, { $set: { revoked_at: deps.now() } });
    await audit(req, res, 'member.removed', { type: 'user', id: user._id, name: user.email }, { role: membership.role });
    res.status(204).end();
  });

  return router;

  async function audit(req: Request, res: Response, action: string, target: { type: string; id: string; name: string }, details: Record<string, unknown>) {
    await recordWorkspaceAudit(workspaceAccessOf(res).workspace.id, { action, actor: actorOf(res), target, at: deps.now(), ip: clientIp(req), details });
  }
}

async function findMember(workspaceId: string, userId: string) {
  const [membership, user] = await Promise.all([
    Membership.findOne({ workspace_id: workspaceId, user_id: userId }).lean(),
    User.findById(userId, { name: 1, email: 1 }).lean(),
  ]);
  if (!membership || !user) throw new HttpError(404, 'member not found');
  return { membership, user };
}

/** Owners are made and unmade by owners only, so an admin cannot take over a workspace. */
function assertMayTouchOwners(callerRole: Role | null, from: Role, to: Role | null): void {
  if ((from === 'owner' || to === 'owner') && callerRole !== 'owner') {
    throw new HttpError(403, 'only an owner can give, take away or remove the owner role');
  }
}

async function assertAnotherOwner(workspaceId: string): Promise<void> {
  const owners = await Membership.countDocuments({ workspace_id: workspaceId, role: 'owner' });
  if (owners <= 1) throw new HttpError(400, 'a workspace always needs an owner; make another member owner first');
}

function memberView(membership: { user_id: string; role: string; joined_at: Date }, user: { name: string; email: string }) {
  return { user_id: membership.user_id, name: user.name, email: user.email, role: membership.role, joined_at: membership.joined_at };
}
