import type { Request, Response } from 'express';
import { ApiKey, type ApiKeyDocument } from '../../activities/db/models/api-key';
import { OAuthToken, type OAuthTokenDocument } from '../../activities/db/models/oauth-token';
import { Session } from '../../activities/db/models/session';
import { User } from '../../activities/db/models/user';
import { HttpError } from '../http-error';
import type { Principal } from './context';
import { countRequest, type CountedRequest } from './rate-limit';
import { API_KEY_PREFIX, hashSecretToken, OAUTH_TOKEN_PREFIX } from './secret-tokens';
import type { SessionTokens } from './session-tokens';

/** A 401 as the contract wants it: `WWW-Authenticate: Bearer`, and why in `detail`. */
export function unauthorized(detail: string, error?: 'invalid_token'): HttpError {
  return new HttpError(401, detail, {}, { 'WWW-Authenticate': error ? `Bearer error="${error}"` : 'Bearer' });
}

/** Session records are touched at most this often, so reads do not turn into writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface AuthenticateDeps {
  tokens: SessionTokens;
  now: () => Date;
}

/** The credential a request carries: `X-API-Key`, or `Authorization: Bearer` of any kind. */
export function presentedCredential(req: Request): string | undefined {
  const key = req.get('X-API-Key');
  if (key) return key.trim();
  const authorization = req.get('Authorization');
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthorized('the Authorization header must be "Bearer <token>"', 'invalid_token');
  return match[1];
}

/**
 * Who the request is from, or a 401. Keys and app tokens are counted against their
 * per-minute limit here (429 past it) and get the rate-limit headers on every response.
 */
export async function authenticate(req: Request, res: Response, deps: AuthenticateDeps): Promise<Principal> {
  const presented = presentedCredential(req);
  if (!presented) throw unauthorized('sign in, or send an API key in X-API-Key or Authorization: Bearer');
  if (req.get('X-API-Key') && !presented.startsWith(API_KEY_PREFIX)) throw unauthorized('X-API-Key does not hold an API key', 'invalid_token');
  const now = deps.now();

  if (presented.startsWith(API_KEY_PREFIX)) {
    const counted = await countRequest<ApiKeyDocument>(ApiKey, { key_hash: hashSecretToken(presented), revoked_at: null }, now);
    if (!counted) throw unauthorized('the API key is not valid or has been revoked', 'invalid_token');
    applyRateLimit(res, counted);
    const key = counted.credential;
    return { credential: { kind: 'api_key', keyId: key._id, name: key.name, workspaceId: key.workspace_id }, user: null };
  }

  if (presented.startsWith(OAUTH_TOKEN_PREFIX)) {
    const counted = await countRequest<OAuthTokenDocument>(OAuthToken, { token_hash: hashSecretToken(presented), revoked_at: null, expires_at: { $gt: now } }, now);
    if (!counted) throw unauthorized('the access token is not valid, has expired or has been revoked', 'invalid_token');
    applyRateLimit(res, counted);
    const token = counted.credential;
    const user = await User.findById(token.user_id, { name: 1, email: 1 }).lean();
    if (!user) throw unauthorized('the access token belongs to an account that no longer exists', 'invalid_token');
    return {
      credential: { kind: 'oauth', tokenId: token._id, clientName: token.client_name, workspaceId: token.workspace_id },
      user: { id: user._id, name: user.name, email: user.email },
    };
  }

  const claims = await deps.tokens.verify(presented, 'session');
  if (!claims?.sessionId) throw unauthorized('the session token is not valid or has expired', 'invalid_token');
  const [session, user] = await Promise.all([
    Session.findOne({ _id: claims.sessionId, user_id: claims.userId }).lean(),
    User.findById(claims.userId, { name: 1, email: 1 }).lean(),
  ]);
  if (!session || !user || session.revoked_at || session.expires_at <= now) {
    throw unauthorized('the session has ended (signed out, revoked or expired); sign in again', 'invalid_token');
  }
  if (now.getTime() - session.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    await Session.updateOne({ _id: session._id }, { $set: { last_used_at: now } });
  }
  return { credential: { kind: 'session', sessionId: session._id }, user: { id: user._id, name: user.name, email: user.email } };
}

function applyRateLimit(res: Response, counted: CountedRequest<unknown>): void {
  res.setHeader('X-RateLimit-Limit', String(counted.limit));
  res.setHeader('X-RateLimit-Remaining', String(counted.remaining));
  res.setHeader('X-RateLimit-Reset', String(counted.resetAt));
  if (counted.exceeded) {
    const retryAfter = Math.max(1, counted.resetAt - Math.floor(Date.now() / 1000));
    throw new HttpError(429, 'rate limit exceeded; slow down', {}, { 'Retry-After': String(retryAfter) });
  }
}
