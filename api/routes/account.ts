import { Router, type Request, type Response } from 'express';
import { isDuplicateKeyError } from '../../db/errors';
import { recordUserAudit } from '../../domain/audit/audit-log';
import { Membership } from '../../db/models/membership';
import { OAuthToken } from '../../db/models/oauth-token';
import { Session } from '../../db/models/session';
import { User } from '../../db/models/user';
import { Workspace } from '../../db/models/workspace';
import { actorOf, sessionUserOf } from '../auth/context';
import { unauthorized } from '../auth/credentials';
import type { AuthDeps } from '../auth/deps';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { clientIp, revokeSessions } from '../auth/sessions';
import { claimSignInAttempt, normalizeEmail } from '../auth/sign-in-throttle';
import { matchTotp, newTotpSecret, otpauthUri } from '../auth/totp';
import { openSecret, sealSecret } from '../../contracts/secret-box';
import { HttpError } from '../../domain/shared/http-error';
import { userView } from '../views';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type Body<K extends keyof operations> = operations[K] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

const TOTP_ISSUER = 'Voice Agent Service';
const SESSIONS_LISTED = 50;

/** The signed-in person's own account: profile, email, password, sessions, second factor. */
export function accountRoutes(deps: AuthDeps): Router {
  const router = apiRouter();

  router.get('/account', async (_req, res) => {
    res.json(userView(await currentUser(res)));
  });

  router.patch('/account', async (_req, res) => {
    const { name } = _req.body as Body<'updateAccount'>;
    const user = await User.findOneAndUpdate(
      { _id: sessionUserOf(res).id },
      { $set: { name: name.trim(), updated_at: deps.now() } },
      { returnDocument: 'after' },
    ).lean();
    if (!user) throw unauthorized('the account no longer exists');
    res.json(userView(user));
  });

  router.delete('/account', async (req, res) => {
    const me = sessionUserOf(res);
    const owned = await Membership.find({ user_id: me.id, role: 'owner' }, { workspace_id: 1 }).lean();
    for (const { workspace_id } of owned) {
      const owners = await Membership.countDocuments({ workspace_id, role: 'owner' });
      if (owners <= 1) {
        const workspace = await Workspace.findById(workspace_id, { name: 1 }).lean();
        throw new HttpError(400, `you are the last owner of the workspace "${workspace?.name ?? workspace_id}"; make another member owner first`);
      }
    }
    const now = deps.now();
    await recordUserAudit(me.id, {
      action: 'account.deleted',
      actor: actorOf(res),
      target: { type: 'user', id: me.id, name: me.email },
      at: now,
      ip: clientIp(req),
    });
    await Promise.all([
      revokeSessions(me.id, now),
      OAuthToken.updateMany({ user_id: me.id, revoked_at: null }, { $set: { revoked_at: now } }),
      Membership.deleteMany({ user_id: me.id }),
    ]);
    await User.deleteOne({ _id: me.id });
    res.status(204).end();
  });

  router.post('/account/email', async (req, res) => {
    const body = req.body as Body<'changeEmail'>;
    const user = await checkPassword(res, body.password);
    const email = normalizeEmail(body.email);
    let updated;
    try {
      updated = await User.findOneAndUpdate({ _id: user._id }, { $set: { email, updated_at: deps.now() } }, { returnDocument: 'after' }).lean();
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new HttpError(409, 'another account uses this email address');
      throw err;
    }
    if (!updated) throw unauthorized('the account no longer exists');
    await audit(req, res, 'account.email_changed', { from: user.email, to: email });
    res.json(userView(updated));
  });

  router.post('/account/password', async (req, res) => {
    const body = req.body as Body<'changePassword'>;
    const user = await checkPassword(res, body.current_password);
    const now = deps.now();
    await User.updateOne({ _id: user._id }, { $set: { password_hash: await hashPassword(body.new_password, deps.config.passwordHashLogN), updated_at: now } });
    const revoked = await revokeSessions(user._id, now, sessionUserOf(res).sessionId);
    await audit(req, res, 'account.password_changed', { revoked_sessions: revoked });
    res.json({ revoked_sessions: revoked });
  });

  router.get('/account/sessions', async (_req, res) => {
    const me = sessionUserOf(res);
    const now = deps.now();
    const sessions = await Session.find({ user_id: me.id }).sort({ created_at: -1, _id: -1 }).limit(SESSIONS_LISTED).lean();
    res.json(
      sessions.map((s) => ({
        id: s._id,
        current: s._id === me.sessionId,
        active: !s.revoked_at && s.expires_at > now,
        created_at: s.created_at,
        last_used_at: s.last_used_at,
        expires_at: s.expires_at,
        revoked_at: s.revoked_at ?? null,
        ip: s.ip ?? null,
        user_agent: s.user_agent ?? null,
      })),
    );
  });

  router.post('/account/sessions/revoke-others', async (req, res) => {
    const me = sessionUserOf(res);
    const revoked = await revokeSessions(me.id, deps.now(), me.sessionId);
    await audit(req, res, 'account.sessions_revoked', { revoked_sessions: revoked });
    res.json({ revoked_sessions: revoked });
  });

  router.delete('/account/sessions/:session_id', async (req, res) => {
    const me = sessionUserOf(res);
    const session = await Session.findOne({ _id: req.params.session_id, user_id: me.id }).lean();
    if (!session) throw new HttpError(404, 'session not found');
    if (!session.revoked_at) {
      await Session.updateOne({ _id: session._id, revoked_at: null }, { $set: { revoked_at: deps.now() } });
      await audit(req, res, 'session.revoked', { session_id: session._id });
    }
    res.status(204).end();
  });

  router.post('/account/2fa/setup', async (_req, res) => {
    const user = await currentUser(res);
    if (user.two_factor?.enabled) throw new HttpError(409, 'two-factor sign-in is already on; turn it off first to set up a new secret');
    const secret = newTotpSecret();
    // Sealed at rest (docs/decisions/0196); this answer is the one time it is shown.
    await User.updateOne({ _id: user._id }, { $set: { 'two_factor.pending_secret': sealSecret(secret) } });
    res.json({ secret, otpauth_uri: otpauthUri(secret, user.email, TOTP_ISSUER) });
  });

  router.post('/account/2fa/enable', async (req, res) => {
    const { code } = req.body as Body<'enableTwoFactor'>;
    const user = await currentUser(res);
    if (user.two_factor?.enabled) throw new HttpError(409, 'two-factor sign-in is already on');
    const pending = user.two_factor?.pending_secret;
    if (!pending) throw new HttpError(400, 'set up two-factor sign-in first (POST /account/2fa/setup)');
    const step = matchTotp(openSecret(pending), code, deps.now());
    if (step === null) throw new HttpError(400, 'the code is not correct; check the time on your device and try the current code');
    // The pending secret moves as stored (sealed, or plaintext if set up before encryption; the next setup seals it).
    const updated = await User.findOneAndUpdate(
      { _id: user._id, 'two_factor.pending_secret': pending },
      {
        $set: {
          'two_factor.enabled': true,
          'two_factor.secret': pending,
          'two_factor.pending_secret': null,
          'two_factor.last_step': step,
          updated_at: deps.now(),
        },
      },
      { returnDocument: 'after' },
    ).lean();
    if (!updated) throw new HttpError(409, 'the setup changed meanwhile; set up again');
    await audit(req, res, 'account.two_factor_enabled');
    res.json(userView(updated));
  });

  router.post('/account/2fa/disable', async (req, res) => {
    const body = req.body as Body<'disableTwoFactor'>;
    const user = await currentUser(res);
    if (!user.two_factor?.enabled || !user.two_factor.secret) throw new HttpError(409, 'two-factor sign-in is already off');
    const now = deps.now();
    const attempt = await claimSignInAttempt(user.email, now);
    const passwordOk = body.password !== undefined && (await verifyPassword(body.password, user.password_hash));
    const codeOk = body.code !== undefined && matchTotp(openSecret(user.two_factor.secret), body.code, now, user.two_factor.last_step ?? null) !== null;
    if (!passwordOk && !codeOk) throw new HttpError(400, 'send your password or a current code to turn two-factor sign-in off');
    await attempt.succeeded();
    const updated = await User.findOneAndUpdate(
      { _id: user._id },
      { $set: { 'two_factor.enabled': false, 'two_factor.secret': null, 'two_factor.pending_secret': null, 'two_factor.last_step': null, updated_at: now } },
      { returnDocument: 'after' },
    ).lean();
    await audit(req, res, 'account.two_factor_disabled');
    res.json(userView(updated ?? user));
  });

  return router;

  async function currentUser(res: Response) {
    const user = await User.findById(sessionUserOf(res).id).lean();
    if (!user) throw unauthorized('the account no longer exists');
    return user;
  }

  /**
   * The current password, checked like a sign-in: failures count toward the address's
   * allowance, so a stolen session cannot be used to guess the password.
   */
  async function checkPassword(res: Response, password: string) {
    const user = await currentUser(res);
    const now = deps.now();
    const attempt = await claimSignInAttempt(user.email, now);
    if (!(await verifyPassword(password, user.password_hash))) throw new HttpError(400, 'the current password is not correct');
    await attempt.succeeded();
    return user;
  }

  async function audit(req: Request, res: Response, action: string, details: Record<string, unknown> = {}) {
    const me = sessionUserOf(res);
    await recordUserAudit(me.id, {
      action,
      actor: actorOf(res),
      target: { type: 'user', id: me.id, name: me.email },
      at: deps.now(),
      ip: clientIp(req),
      details,
    });
  }
}
