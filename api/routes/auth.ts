import { Router, type Request } from 'express';
import { isDuplicateKeyError } from '../../db/errors';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { newId } from '../../db/ids';
import { Membership } from '../../db/models/membership';
import { Session } from '../../db/models/session';
import { User } from '../../db/models/user';
import { Workspace } from '../../db/models/workspace';
import { appendLedgerItem } from '../../domain/billing/ledger';
import { DEFAULT_PLAN } from '../../domain/billing/plans';
import { principalOf } from '../auth/context';
import { unauthorized } from '../auth/credentials';
import type { AuthDeps } from '../auth/deps';
import { hashPassword } from '../auth/passwords';
import { challengedUser, checkPassword, checkTwoFactorCode, completedSignIn, needsSecondFactor } from '../auth/password-sign-in';
import { API_KEY_PERMISSIONS, oauthPermissions, type Role } from '../../domain/accounts/permissions';
import { CHALLENGE_TTL_MS, clientIp, startSession } from '../auth/sessions';
import { normalizeEmail, type SignInAttemptClaim } from '../auth/sign-in-throttle';
import { HttpError } from '../../domain/shared/http-error';
import { userView, workspaceView } from '../views';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type SignupBody = operations['signup']['requestBody']['content']['application/json'];
type LoginBody = operations['login']['requestBody']['content']['application/json'];
type TwoFactorLoginBody = operations['loginTwoFactor']['requestBody']['content']['application/json'];

/** Sign-up, sign-in (with the second factor), who am I, and sign-out. */
export function authRoutes(deps: AuthDeps): Router {
  const router = apiRouter();

  router.post('/auth/signup', async (req, res) => {
    const body = req.body as SignupBody;
    const now = deps.now();
    const email = normalizeEmail(body.email);
    deps.addressLimiter.take('signup_email', email);
    const user = {
      _id: newId(),
      name: body.name.trim(),
      email,
      password_hash: await hashPassword(body.password, deps.config.passwordHashLogN),
      created_at: now,
      updated_at: now,
    };
    try {
      await User.create(user);
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new HttpError(409, 'an account with this email already exists; sign in instead');
      throw err;
    }
    const workspace = await createWorkspace(user, body.workspace_name?.trim() || `${user.name}'s workspace`, deps);
    const actor = { type: 'user' as const, id: user._id, name: user.name };
    await recordWorkspaceAudit(workspace._id, {
      action: 'account.signed_up',
      actor,
      target: { type: 'user', id: user._id, name: user.email },
      at: now,
      ip: clientIp(req),
    });
    const session = await startSession(user._id, req, deps);
    res.status(201).json({ ...session, user: userView(user), workspace: workspaceView(workspace, 'owner') });
  });

  router.post('/auth/login', async (req, res) => {
    const body = req.body as LoginBody;
    const now = deps.now();
    const { user, attempt } = await checkPassword(req, body.email, body.password, deps);
    if (needsSecondFactor(user)) {
      await attempt.release(); // the password was right; the code is its own attempt
      const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS);
      const challenge = await deps.tokens.sign({ userId: user._id, purpose: 'two_factor' }, expiresAt);
      res.json({ two_factor_required: true, challenge_token: challenge, expires_at: expiresAt });
      return;
    }
    res.json(await completeSignIn(req, user, attempt, deps));
  });

  router.post('/auth/login/2fa', async (req, res) => {
    const body = req.body as TwoFactorLoginBody;
    const now = deps.now();
    const claims = await deps.tokens.verify(body.challenge_token, 'two_factor');
    const user = await challengedUser(claims?.userId);
    const attempt = await checkTwoFactorCode(req, user, body.code, now);
    res.json(await completeSignIn(req, user, attempt, deps));
  });

  router.get('/auth/me', async (_req, res) => {
    const { credential, user } = principalOf(res);
    if (credential.kind === 'session') {
      const full = await User.findById(user?.id).lean();
      if (!full) throw unauthorized('the account no longer exists');
      res.json({
        credential: { type: 'session', id: credential.sessionId, name: null },
        user: userView(full),
        workspace: null,
        role: null,
        permissions: [],
        workspaces: await workspacesOf(full._id),
      });
      return;
    }
    const workspace = await Workspace.findById(credential.workspaceId).lean();
    if (!workspace) throw unauthorized('the credential belongs to a workspace that no longer exists');
    let role: Role | null = null;
    let permissions = API_KEY_PERMISSIONS;
    let userBody = null;
    if (credential.kind === 'oauth' && user) {
      const membership = await Membership.findOne({ workspace_id: workspace._id, user_id: user.id }).lean();
      if (!membership) throw unauthorized('the app was connected by someone no longer in its workspace');
      role = membership.role as Role;
      permissions = oauthPermissions(role);
      const full = await User.findById(user.id).lean();
      userBody = full ? userView(full) : null;
    }
    res.json({
      credential:
        credential.kind === 'api_key'
          ? { type: 'api_key', id: credential.keyId, name: credential.name }
          : { type: 'oauth', id: credential.tokenId, name: credential.clientName },
      user: userBody,
      workspace: workspaceView(workspace, role),
      role,
      permissions: [...permissions],
      workspaces: [],
    });
  });

  router.post('/auth/logout', async (_req, res) => {
    const { credential } = principalOf(res);
    if (credential.kind === 'session') await Session.updateOne({ _id: credential.sessionId, revoked_at: null }, { $set: { revoked_at: deps.now() } });
    res.status(204).end();
  });

  return router;
}

type SignedInUser = { _id: string; name: string; email: string; created_at: Date; two_factor?: { enabled?: boolean | null } | null };

async function completeSignIn(req: Request, user: SignedInUser, attempt: SignInAttemptClaim, deps: AuthDeps) {
  await completedSignIn(req, user, attempt, deps);
  const session = await startSession(user._id, req, deps);
  return { ...session, user: userView(user), workspaces: await workspacesOf(user._id) };
}

/** The user's workspaces, oldest membership first (the default when X-Workspace-ID is absent). */
export async function workspacesOf(userId: string) {
  const memberships = await Membership.find({ user_id: userId }).sort({ joined_at: 1, _id: 1 }).lean();
  const workspaces = await Workspace.find({ _id: { $in: memberships.map((m) => m.workspace_id) } }).lean();
  const byId = new Map(workspaces.map((w) => [w._id, w]));
  return memberships.flatMap((m) => {
    const workspace = byId.get(m.workspace_id);
    return workspace ? [workspaceView(workspace, m.role as Role)] : [];
  });
}

/** A new workspace in onboarding, its owner, and the welcome credits. */
export async function createWorkspace(owner: { _id: string }, name: string, deps: AuthDeps) {
  const now = deps.now();
  // New workspaces keep TRAI's calling hours for Indian numbers (0207); they may turn it off with PATCH /workspace.
  const workspace = {
    _id: newId(),
    name,
    status: 'onboarding' as const,
    plan: DEFAULT_PLAN,
    created_by: owner._id,
    activated_at: null,
    compliance: { india_calling_hours: true },
    created_at: now,
    updated_at: now,
  };
  await Workspace.create(workspace);
  await Membership.create({ _id: newId(), workspace_id: workspace._id, user_id: owner._id, role: 'owner', joined_at: now });
  if (deps.welcomeCreditsPaise > 0) {
    await appendLedgerItem({
      workspaceId: workspace._id,
      kind: 'grant',
      amountPaise: deps.welcomeCreditsPaise,
      idempotencyKey: `welcome-credits:${workspace._id}`,
      at: now,
      note: 'welcome credits',
      byName: 'system',
    });
  }
  return workspace;
}
