import type { Request, Response } from 'express';
import type { AuthDeps } from '../auth/deps';
import {
  challengedUser,
  checkPassword,
  checkTwoFactorCode,
  completedSignIn,
  EXPIRED_CHALLENGE,
  needsSecondFactor,
  type SignInUser,
} from '../auth/password-sign-in';
import { CHALLENGE_TTL_MS } from '../auth/sessions';
import { HttpError } from '../../domain/shared/http-error';
import type { AuthorizationRequest } from './authorization-request';
import { renderSignInStep, renderTwoFactorStep, type StepProblem } from './consent-page';
import type { Consenter } from './consent-session';
import { CONSENT_TOKEN_TTL_MS, pageTokenUserId, signPageToken } from './page-tokens';
import { sourceAddress } from '../auth/address-limits';

/**
 * Signing in on the consent page, as `POST /auth/login` and `/auth/login/2fa` do it (the same
 * checks, messages, throttle and audit: api/auth/password-sign-in.ts), but answered as
 * pages: a wrong password or code shows the step again with the error (401), a throttled
 * address shows it with 429 and `Retry-After`. A finished sign-in opens no session: it gives
 * a consent token good for this authorization request only (page-tokens.ts).
 */

/** Limits of the login body in the OpenAPI document (Email, Login.password). */
const MAX_EMAIL_LENGTH = 254;
const MAX_PASSWORD_LENGTH = 128;
const TOTP_CODE = /^[0-9]{6}$/;

/** Whether a post of the page is a sign-in step (password, or the code after it). */
export function isSignInPost(params: Record<string, unknown>): boolean {
  return params.challenge_token !== undefined || params.email !== undefined || params.password !== undefined;
}

/**
 * Runs the posted sign-in step. Answers the member who finished signing in (the caller shows
 * the workspace step), or null when this step answered a page itself (an error, or the code).
 */
export async function signInOnPage(
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  params: Record<string, unknown>,
  deps: AuthDeps,
): Promise<Consenter | null> {
  return params.challenge_token !== undefined ? secondFactorStep(req, res, request, params, deps) : passwordStep(req, res, request, params, deps);
}

async function passwordStep(
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  params: Record<string, unknown>,
  deps: AuthDeps,
): Promise<Consenter | null> {
  const email = params.email;
  const password = params.password;
  if (
    typeof email !== 'string' ||
    typeof password !== 'string' ||
    !email.trim() ||
    !password ||
    email.length > MAX_EMAIL_LENGTH ||
    password.length > MAX_PASSWORD_LENGTH
  ) {
    renderSignInStep(res, request, params, {
      problem: { status: 400, message: 'Enter your email address and your password.' },
      email: typeof email === 'string' ? email : undefined,
    });
    return null;
  }
  let checked;
  try {
    // The page's sign-in counts with the API's (decision 0172).
    deps.addressLimiter.take('login', sourceAddress(req));
    checked = await checkPassword(req, email, password, deps);
  } catch (err) {
    renderSignInStep(res, request, params, { problem: pageProblem(err), email });
    return null;
  }
  const { user, attempt } = checked;
  if (needsSecondFactor(user)) {
    await attempt.release(); // the password was right; the code is its own attempt
    const challenge = await signPageToken(deps.tokens, 'oauth_two_factor', user._id, request, new Date(deps.now().getTime() + CHALLENGE_TTL_MS));
    renderTwoFactorStep(res, request, params, challenge);
    return null;
  }
  await completedSignIn(req, user, attempt, deps, signedInDetails(request));
  return signedIn(user, request, deps);
}

async function secondFactorStep(
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  params: Record<string, unknown>,
  deps: AuthDeps,
): Promise<Consenter | null> {
  const challenge = typeof params.challenge_token === 'string' ? params.challenge_token : '';
  const userId = await pageTokenUserId(deps.tokens, challenge, 'oauth_two_factor', request);
  let user: SignInUser;
  try {
    user = await challengedUser(userId ?? undefined);
  } catch (err) {
    renderSignInStep(res, request, params, { problem: pageProblem(err, EXPIRED_CHALLENGE) });
    return null;
  }
  const code = typeof params.code === 'string' ? params.code.trim() : '';
  if (!TOTP_CODE.test(code)) {
    renderTwoFactorStep(res, request, params, challenge, { status: 400, message: 'Enter the 6-digit code from your authenticator app.' });
    return null;
  }
  try {
    deps.addressLimiter.take('login_2fa', sourceAddress(req));
    const attempt = await checkTwoFactorCode(req, user, code, deps.now());
    await completedSignIn(req, user, attempt, deps, signedInDetails(request));
  } catch (err) {
    renderTwoFactorStep(res, request, params, challenge, pageProblem(err));
    return null;
  }
  return signedIn(user, request, deps);
}

async function signedIn(user: SignInUser, request: AuthorizationRequest, deps: AuthDeps): Promise<Consenter> {
  const token = await signPageToken(deps.tokens, 'oauth_consent', user._id, request, new Date(deps.now().getTime() + CONSENT_TOKEN_TTL_MS));
  return { user: { id: user._id, name: user.name, email: user.email }, credential: { field: 'consent_token', value: token } };
}

/** The audit log tells a sign-in on the consent page from one of the console. */
function signedInDetails(request: AuthorizationRequest): Record<string, unknown> {
  return { via: 'oauth_consent_page', client_id: request.client._id, client_name: request.client.client_name };
}

/**
 * The API's own answer to a failed check, as a page: its status, its message (the login
 * endpoints' words), and `Retry-After` when throttled. Anything else is a server error.
 */
function pageProblem(err: unknown, fallback?: string): StepProblem {
  if (!(err instanceof HttpError) || (err.status !== 401 && err.status !== 429)) throw err;
  const headers = err.headers['Retry-After'] ? { 'Retry-After': err.headers['Retry-After'] } : undefined;
  return { status: err.status, message: typeof err.detail === 'string' ? err.detail : (fallback ?? 'sign in again'), headers };
}
