import { createHash } from 'node:crypto';
import type { SessionTokens } from '../auth/session-tokens';
import type { AuthorizationRequest } from './authorization-request';

/**
 * The consent page's own tokens, carried from step to step in hidden fields (the page sets
 * no cookie): a two-factor challenge after a right password, and "signed in on this page"
 * after the whole sign-in. Each is bound to one authorization request (client, redirect URI,
 * PKCE challenge, resource, state, scope), so a token seen on one page cannot approve
 * another app's request, and neither is a session or a challenge of `/auth/login/2fa`.
 */
export type PageTokenPurpose = 'oauth_two_factor' | 'oauth_consent';

/** Long enough to pick a workspace; a sign-in on the page is for this one consent only. */
export const CONSENT_TOKEN_TTL_MS = 10 * 60_000;

export function requestBinding(request: AuthorizationRequest): string {
  const parts = [request.client._id, request.redirectUri, request.codeChallenge, request.resource, request.state ?? '', request.scope ?? ''];
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

export function signPageToken(
  tokens: SessionTokens,
  purpose: PageTokenPurpose,
  userId: string,
  request: AuthorizationRequest,
  expiresAt: Date,
): Promise<string> {
  return tokens.sign({ userId, purpose, binding: requestBinding(request) }, expiresAt);
}

/** The user a page token names, when it is valid, unexpired, of that purpose and bound to this request. */
export async function pageTokenUserId(tokens: SessionTokens, token: string, purpose: PageTokenPurpose, request: AuthorizationRequest): Promise<string | null> {
  const claims = await tokens.verify(token, purpose);
  return claims && claims.binding === requestBinding(request) ? claims.userId : null;
}
