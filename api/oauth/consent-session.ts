import type { Request, Response } from 'express';
import type { UserSummary } from '../auth/context';
import { authenticate, type AuthenticateDeps } from '../auth/credentials';
import { API_KEY_PREFIX, OAUTH_TOKEN_PREFIX } from '../auth/secret-tokens';
import { HttpError } from '../http-error';

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

/** The session token of a consent step: the form's `session_token`, else `Authorization: Bearer`. */
export function presentedSessionToken(req: Request): string | undefined {
  const field = (req.body as Record<string, unknown> | undefined)?.session_token;
  if (typeof field === 'string' && field.trim()) return field.trim();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('Authorization') ?? '');
  return match?.[1];
}
