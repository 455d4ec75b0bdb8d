import type { Request, Response } from 'express';
import { User } from '../../db/models/user';
import type { UserSummary } from '../auth/context';
import { authenticate, type AuthenticateDeps } from '../auth/credentials';
import { API_KEY_PREFIX, OAUTH_TOKEN_PREFIX } from '../auth/secret-tokens';
import { HttpError } from '../../domain/shared/http-error';
import type { AuthorizationRequest } from './authorization-request';
import { pageTokenUserId } from './page-tokens';

/**
 * Who is consenting, and the credential the next step of the page carries in a hidden field:
 * the console's session token (`session_token`), or the token of a sign-in on the page
 * itself (`consent_token`, bound to this authorization request).
 */
export interface Consenter {
  user: UserSummary;
  credential: ConsentCredential;
}

export interface ConsentCredential {
  field: 'session_token' | 'consent_token';
  value: string;
}

/**
 * The member behind a session token posted by the consent page, or null. The token is
 * checked by the one authentication path of the API (`authenticate`, given a request view
 * that carries it as a bearer token), so a signed-out, revoked or expired session cannot
 * consent. API keys and app tokens cannot consent for anybody: only a person can.
 */
export async function consentingUser(sessionToken: string | undefined, res: Response, deps: AuthenticateDeps): Promise<UserSummary | null> {
  if (!sessionToken || sessionToken.startsWith(API_KEY_PREFIX) || sessionToken.startsWith(OAUTH_TOKEN_PREFIX)) return null;
  const bearer = { get: (name: string) => (name.toLowerCase() === 'authorization' ? `Bearer ${sessionToken}` : undefined) } as unknown as Request;
  try {
    const principal = await authenticate(bearer, res, deps);
    return principal.credential.kind === 'session' ? principal.user : null;
  } catch (err) {
    if (err instanceof HttpError && err.status === 401) return null;
    throw err;
  }
}

/** The member signed in on the page for this request, when the posted `consent_token` is good. */
export async function pageSignedInUser(consentToken: string, request: AuthorizationRequest, deps: AuthenticateDeps): Promise<UserSummary | null> {
  const userId = await pageTokenUserId(deps.tokens, consentToken, 'oauth_consent', request);
  const user = userId ? await User.findById(userId, { name: 1, email: 1 }).lean() : null;
  return user ? { id: user._id, name: user.name, email: user.email } : null;
}

/** The consent token posted by a step after a sign-in on the page, if any. */
export function presentedConsentToken(req: Request): string | undefined {
  const field = (req.body as Record<string, unknown> | undefined)?.consent_token;
  return typeof field === 'string' && field.trim() ? field.trim() : undefined;
}

/** The session token of a consent step: the form's `session_token`, else `Authorization: Bearer`. */
export function presentedSessionToken(req: Request): string | undefined {
  const field = (req.body as Record<string, unknown> | undefined)?.session_token;
  if (typeof field === 'string' && field.trim()) return field.trim();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('Authorization') ?? '');
  return match?.[1];
}
