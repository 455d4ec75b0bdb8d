import type { Request } from 'express';
import { recordUserAudit } from '../../domain/audit/audit-log';
import { User, type UserDocument } from '../../db/models/user';
import { unauthorized } from './credentials';
import type { AuthDeps } from './deps';
import { decoyHash, verifyPassword } from './passwords';
import { spendTotpCode } from './second-factor';
import { auditFailedSignIn } from './sign-in-audit';
import { claimSignInAttempt, normalizeEmail, type SignInAttemptClaim } from './sign-in-throttle';
import { clientIp } from './sessions';

/**
 * The checks of a person signing in, shared by `POST /auth/login` (and its 2FA step) and the
 * OAuth consent page, so both answer the same messages and count against the same
 * throttle. Each check throws the API's errors: 429 with `Retry-After` while the address is
 * throttled, 401 for a wrong secret.
 */

export type SignInUser = UserDocument & { _id: string };

/** The message for a wrong password and for an unknown address alike (no user enumeration). */
export const WRONG_CREDENTIALS = 'wrong email or password';
export const WRONG_CODE = 'wrong two-factor code';
export const EXPIRED_CHALLENGE = 'the sign-in challenge is not valid or has expired; sign in again';

/**
 * The account when the password is right. An unknown address costs the same hash check
 * (a decoy) and the same failure as a wrong password. The claimed attempt stays a failure
 * unless the caller reports success (`completedSignIn`) or releases it (second factor next).
 */
export async function checkPassword(req: Request, email: string, password: string, deps: AuthDeps): Promise<{ user: SignInUser; attempt: SignInAttemptClaim }> {
  const now = deps.now();
  const attempt = await claimSignInAttempt(email, now);
  const user = await User.findOne({ email: normalizeEmail(email) }).lean();
  const passwordOk = await verifyPassword(password, user?.password_hash ?? (await decoyHash(deps.config.passwordHashLogN)));
  if (!user || !passwordOk) {
    await auditFailedSignIn(req, email, user, 'wrong password', now);
    throw unauthorized(WRONG_CREDENTIALS);
  }
  return { user, attempt };
}

/** Whether the account asks for a code after the password. */
export function needsSecondFactor(user: SignInUser): boolean {
  return user.two_factor?.enabled === true;
}

/** The account behind a checked challenge, when it still has two-factor on; else 401. */
export async function challengedUser(userId: string | undefined): Promise<SignInUser> {
  const user = userId ? await User.findById(userId).lean() : null;
  if (!user?.two_factor?.enabled || !user.two_factor.secret) throw unauthorized(EXPIRED_CHALLENGE);
  return user;
}

/** Checks the second factor as its own throttled attempt, spending the code's step. */
export async function checkTwoFactorCode(req: Request, user: SignInUser, code: string, now: Date): Promise<SignInAttemptClaim> {
  const attempt = await claimSignInAttempt(user.email, now);
  if (!(await spendTotpCode(user, code, now))) {
    await auditFailedSignIn(req, user.email, user, WRONG_CODE, now);
    throw unauthorized(WRONG_CODE);
  }
  return attempt;
}

/**
 * A sign-in went through: the address's failures are forgotten and the audit log says so
 * (`details` tells where, when it was not the API's own sign-in).
 */
export async function completedSignIn(
  req: Request,
  user: { _id: string; name: string; email: string },
  attempt: SignInAttemptClaim,
  deps: Pick<AuthDeps, 'now'>,
  details?: Record<string, unknown>,
): Promise<void> {
  await attempt.succeeded();
  await recordUserAudit(user._id, {
    action: 'auth.signed_in',
    actor: { type: 'user', id: user._id, name: user.name },
    target: { type: 'user', id: user._id, name: user.email },
    at: deps.now(),
    ip: clientIp(req),
    ...(details ? { details } : {}),
  });
}
