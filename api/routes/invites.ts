import { Router, type Request } from 'express';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { newId } from '../../db/ids';
import { isDuplicateKeyError } from '../../db/errors';
import { Invite, type InviteDocument } from '../../db/models/invite';
import { Membership } from '../../db/models/membership';
import { User } from '../../db/models/user';
import { Workspace } from '../../db/models/workspace';
import { planOf } from '../../domain/billing/plans';
import { actorOf, sessionUserOf, workspaceAccessOf } from '../auth/context';
import { unauthorized } from '../auth/credentials';
import type { AuthDeps } from '../auth/deps';
import { hashPassword, verifyPassword } from '../auth/passwords';
import type { Role } from '../../domain/accounts/permissions';
import { hashSecretToken, INVITE_TOKEN_PREFIX, newSecretToken } from '../auth/secret-tokens';
import { clientIp, startSession } from '../auth/sessions';
import { claimSignInAttempt, normalizeEmail } from '../auth/sign-in-throttle';
import { spendTotpCode } from '../auth/second-factor';
import { auditFailedSignIn } from '../auth/sign-in-audit';
import { HttpError, validationFailed } from '../../domain/shared/http-error';
import { userView, workspaceView } from '../views';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type NewInvite = operations['createInvite']['requestBody']['content']['application/json'];
type AcceptInvite = operations['acceptInvite']['requestBody']['content']['application/json'];

/** An invitation link is good for a week. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;
const MIN_NEW_PASSWORD = 8;

/** Invites: listed and managed by the workspace, read and accepted by whoever holds the link. */
export function inviteRoutes(deps: AuthDeps): Router {
  const router = apiRouter();

  router.get('/invites', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const invites = await Invite.find({ workspace_id: workspace.id }).sort({ created_at: -1, _id: -1 }).lean();
    res.json(invites.map((invite) => inviteView(invite, deps.now())));
  });

  router.post('/invites', async (req, res) => {
    const { workspace, role: callerRole } = workspaceAccessOf(res);
    const body = req.body as NewInvite;
    const now = deps.now();
    const email = normalizeEmail(body.email);
    if (body.role === 'owner' && callerRole !== 'owner') throw new HttpError(403, 'only an owner can invite an owner');
    const existingUser = await User.findOne({ email }, { _id: 1 }).lean();
    if (existingUser && (await Membership.exists({ workspace_id: workspace.id, user_id: existingUser._id }))) {
      throw new HttpError(409, 'this address is already a member of the workspace');
    }
    const pending = await Invite.find({ workspace_id: workspace.id, status: 'pending', expires_at: { $gt: now } }, { email: 1 }).lean();
    if (pending.some((invite) => invite.email === email)) throw new HttpError(409, 'this address already has a pending invite; withdraw it to send a new one');
    await assertRoomForMember(workspace.id, workspace.plan, pending.length + 1);

    const token = newSecretToken(INVITE_TOKEN_PREFIX);
    const me = sessionUserOf(res);
    const invite = {
      _id: newId(),
      workspace_id: workspace.id,
      email,
      role: body.role,
      token_hash: hashSecretToken(token),
      status: 'pending' as const,
      invited_by: { user_id: me.id, name: me.name },
      created_at: now,
      expires_at: new Date(now.getTime() + INVITE_TTL_MS),
      accepted_at: null,
      accepted_by: null,
    };
    await Invite.create(invite);
    await recordWorkspaceAudit(workspace.id, {
      action: 'invite.sent',
      actor: actorOf(res),
      target: { type: 'invite', id: invite._id, name: email },
      at: now,
      ip: clientIp(req),
      details: { role: body.role },
    });
    res.status(201).json({ ...inviteView(invite, now), token });
  });

  router.delete('/invites/:invite', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const revoked = await Invite.findOneAndUpdate(
      { _id: req.params.invite, workspace_id: workspace.id, status: 'pending' },
      { $set: { status: 'revoked' } },
    ).lean();
    if (!revoked) throw new HttpError(404, 'invite not found');
    await recordWorkspaceAudit(workspace.id, {
      action: 'invite.revoked',
      actor: actorOf(res),
      target: { type: 'invite', id: revoked._id, name: revoked.email },
      at: deps.now(),
      ip: clientIp(req),
    });
    res.status(204).end();
  });

  router.get('/invites/:invite', async (req, res) => {
    const invite = await inviteByToken(req.params.invite as string);
    const [workspace, account] = await Promise.all([Workspace.findById(invite.workspace_id, { name: 1 }).lean(), User.exists({ email: invite.email })]);
    if (!workspace) throw new HttpError(404, 'invite not found');
    const view = inviteView(invite, deps.now());
    res.json({
      workspace: { id: workspace._id, name: workspace.name },
      email: view.email,
      role: view.role,
      status: view.status,
      invited_by: view.invited_by,
      expires_at: view.expires_at,
      account_exists: Boolean(account),
    });
  });

  router.post('/invites/:invite/accept', async (req, res) => {
    const body = req.body as AcceptInvite;
    const now = deps.now();
    const invite = await inviteByToken(req.params.invite as string);
    const status = inviteView(invite, now).status;
    if (status !== 'pending') throw new HttpError(409, `the invite is ${status === 'revoked' ? 'withdrawn' : status}; ask for a new one`);
    const workspace = await Workspace.findById(invite.workspace_id).lean();
    if (!workspace) throw new HttpError(404, 'invite not found');

    const user = (await existingAccount(req, invite.email, body, now)) ?? (await newAccount(invite.email, body, now));
    if (!(await Membership.exists({ workspace_id: workspace._id, user_id: user._id }))) {
      const pendingOthers = await Invite.countDocuments({ workspace_id: workspace._id, status: 'pending', expires_at: { $gt: now }, _id: { $ne: invite._id } });
      await assertRoomForMember(workspace._id, workspace.plan, pendingOthers + 1);
    }
    // Claim the invite first: of two concurrent accepts, exactly one joins.
    const claimed = await Invite.findOneAndUpdate(
      { _id: invite._id, status: 'pending' },
      { $set: { status: 'accepted', accepted_at: now, accepted_by: user._id } },
    ).lean();
    if (!claimed) throw new HttpError(409, 'the invite was used meanwhile');
    try {
      await Membership.create({ _id: newId(), workspace_id: workspace._id, user_id: user._id, role: invite.role, joined_at: now });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    const membership = await Membership.findOne({ workspace_id: workspace._id, user_id: user._id }).lean();
    await recordWorkspaceAudit(workspace._id, {
      action: 'invite.accepted',
      actor: { type: 'user', id: user._id, name: user.name },
      target: { type: 'invite', id: invite._id, name: invite.email },
      at: now,
      ip: clientIp(req),
      details: { role: invite.role },
    });
    const session = await startSession(user._id, req, deps);
    res.json({ ...session, user: userView(user), workspace: workspaceView(workspace, (membership?.role ?? invite.role) as Role) });
  });

  return router;

  /** The invited account proves it is theirs like a sign-in does (password, then code). */
  async function existingAccount(req: Request, email: string, body: AcceptInvite, now: Date) {
    const user = await User.findOne({ email }).lean();
    if (!user) return null;
    const attempt = await claimSignInAttempt(email, now);
    // A failure keeps the claimed attempt; this writes the audit record.
    const fail = async (detail: string) => {
      await auditFailedSignIn(req, email, user, detail, now);
      return unauthorized(detail);
    };
    if (!(await verifyPassword(body.password, user.password_hash))) throw await fail('wrong password for the invited account');
    if (user.two_factor?.enabled && user.two_factor.secret) {
      const claimed = body.code !== undefined && (await spendTotpCode(user, body.code, now));
      if (!claimed) throw await fail(body.code ? 'wrong two-factor code' : 'two-factor sign-in is on: send the current code as `code`');
    }
    await attempt.succeeded();
    return user;
  }

  async function newAccount(email: string, body: AcceptInvite, now: Date) {
    const issues = [];
    if (body.name === undefined) issues.push({ type: 'missing', loc: ['body', 'name'], msg: 'a name is needed to create the account', input: null });
    if (body.password.length < MIN_NEW_PASSWORD) {
      issues.push({
        type: 'string_too_short',
        loc: ['body', 'password'],
        msg: `String should have at least ${MIN_NEW_PASSWORD} characters`,
        input: body.password,
      });
    }
    if (issues.length) throw validationFailed(issues);
    const user = {
      _id: newId(),
      name: body.name!.trim(),
      email,
      password_hash: await hashPassword(body.password, deps.config.passwordHashLogN),
      created_at: now,
      updated_at: now,
    };
    try {
      await User.create(user);
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new HttpError(409, 'an account was created for this address meanwhile; accept with its password');
      throw err;
    }
    return user;
  }
}

async function inviteByToken(token: string) {
  const invite = await Invite.findOne({ token_hash: hashSecretToken(token) }).lean();
  if (!invite) throw new HttpError(404, 'invite not found');
  return invite;
}

/** Members plus pending invites stay within the plan's member limit. */
async function assertRoomForMember(workspaceId: string, plan: string, pendingInvites: number): Promise<void> {
  const max = planOf(plan).maxMembers;
  if (max === null) return;
  const members = await Membership.countDocuments({ workspace_id: workspaceId });
  if (members + pendingInvites > max)
    throw new HttpError(409, `the ${planOf(plan).name} plan allows ${max} members (pending invites count); remove someone or change plan`);
}

type StoredInvite = Pick<InviteDocument, 'email' | 'role' | 'status' | 'invited_by' | 'created_at' | 'expires_at' | 'accepted_at'> & { _id: string };

function inviteView(invite: StoredInvite, now: Date) {
  const expired = invite.status === 'pending' && invite.expires_at <= now;
  return {
    id: invite._id,
    email: invite.email,
    role: invite.role,
    status: expired ? 'expired' : invite.status,
    invited_by: invite.invited_by?.name ?? 'unknown',
    created_at: invite.created_at,
    expires_at: invite.expires_at,
    accepted_at: invite.accepted_at ?? null,
  };
}
