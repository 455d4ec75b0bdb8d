import { randomBytes } from 'node:crypto';
import { newId } from '../../db/ids';
import { Membership } from '../../db/models/membership';
import { OAuthCode, type OAuthCodeDocument } from '../../db/models/oauth-code';
import { OAuthRefreshToken, type OAuthRefreshTokenDocument } from '../../db/models/oauth-refresh-token';
import { OAuthToken } from '../../db/models/oauth-token';
import { issueOAuthToken, revokeOAuthToken } from '../auth/oauth-tokens';
import { hashSecretToken, OAUTH_TOKEN_PREFIX, amongSecretHashes, sameSecretHash } from '../auth/secret-tokens';
import type { AuthorizationRequest } from './authorization-request';
import { OAuthError } from './errors';
import { OAUTH_LIFETIMES } from './lifetimes';
import { verifierMatches } from './pkce';

/** Refresh tokens name their family: `vor_` + the family id (32 hex) + a random secret. */
export const REFRESH_TOKEN_PREFIX = 'vor_';
const FAMILY_ID_LENGTH = 32;

type Family = OAuthRefreshTokenDocument & { _id: string };
type Code = OAuthCodeDocument & { _id: string };

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}

function later(now: Date, seconds: number): Date {
  return new Date(now.getTime() + seconds * 1000);
}

/** A single-use code for an approved request; only its hash is stored. */
export async function issueCode(request: AuthorizationRequest, userId: string, workspaceId: string, now: Date): Promise<string> {
  const code = secret();
  await OAuthCode.create({
    _id: hashSecretToken(code),
    client_id: request.client._id,
    redirect_uri: request.redirectUri,
    code_challenge: request.codeChallenge,
    user_id: userId,
    workspace_id: workspaceId,
    resource: request.resource,
    grant_id: newId(),
    created_at: now,
    expires_at: later(now, OAUTH_LIFETIMES.codeSeconds),
  });
  return code;
}

export interface CodeExchange {
  clientId: string;
  clientName: string;
  code: string;
  codeVerifier: string | undefined;
  redirectUri: string | undefined;
  resource: string | undefined;
}

/**
 * The `authorization_code` grant. Every check is made before the code is spent, so a client
 * that got one parameter wrong is told so; the code is then claimed atomically. A code
 * presented again revokes everything its first exchange produced (OAuth 2.1 section 4.1.3).
 */
export async function exchangeCode(input: CodeExchange, now: Date): Promise<TokenResponse> {
  const code = await OAuthCode.findById(hashSecretToken(input.code)).lean<Code>();
  if (!code || code.client_id !== input.clientId) throw new OAuthError('invalid_grant', 'the authorization code is not valid for this client');
  if (code.used_at) {
    await revokeFamily(code.grant_id, 'authorization code replayed', now);
    throw new OAuthError('invalid_grant', 'the authorization code has already been used; the tokens issued from it are revoked');
  }
  if (code.expires_at <= now) throw new OAuthError('invalid_grant', 'the authorization code has expired');
  if (input.redirectUri !== code.redirect_uri) throw new OAuthError('invalid_grant', 'redirect_uri must be the one of the authorization request');
  if (!input.codeVerifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  if (!verifierMatches(input.codeVerifier, code.code_challenge)) throw new OAuthError('invalid_grant', 'the code_verifier does not match the code_challenge');
  if (input.resource !== undefined && input.resource.replace(/\/+$/, '') !== code.resource) {
    throw new OAuthError('invalid_target', 'resource must be the one of the authorization request');
  }

  const claimed = await OAuthCode.updateOne({ _id: code._id, used_at: null }, { $set: { used_at: now } });
  if (claimed.modifiedCount !== 1) {
    await revokeFamily(code.grant_id, 'authorization code replayed', now);
    throw new OAuthError('invalid_grant', 'the authorization code has already been used; the tokens issued from it are revoked');
  }

  const refreshToken = REFRESH_TOKEN_PREFIX + code.grant_id + secret();
  const family = {
    _id: code.grant_id,
    client_id: code.client_id,
    client_name: input.clientName,
    user_id: code.user_id,
    workspace_id: code.workspace_id,
    resource: code.resource,
    current_hash: hashSecretToken(refreshToken),
    current_expires_at: later(now, OAUTH_LIFETIMES.refreshTokenSeconds),
    rotated_hashes: [],
    access_tokens: [],
    created_at: now,
  };
  await OAuthRefreshToken.create(family);
  const access = await issueAccessToken(family, now);
  return { ...access, refresh_token: refreshToken };
}

export interface Refresh {
  clientId: string;
  refreshToken: string;
  resource: string | undefined;
}

/**
 * The `refresh_token` grant with rotation: the presented token is spent and a new one
 * answered. A rotated token presented again means it leaked (or the client misbehaves):
 * the whole family is revoked, access tokens included (OAuth 2.1 section 4.3.1).
 */
export async function refreshTokens(input: Refresh, now: Date): Promise<TokenResponse> {
  const invalid = new OAuthError('invalid_grant', 'the refresh token is not valid, has expired or has been revoked');
  const familyId = familyIdOf(input.refreshToken);
  const family = familyId ? await OAuthRefreshToken.findById(familyId).lean<Family>() : null;
  if (!family || family.client_id !== input.clientId || family.revoked_at) throw invalid;
  const hash = hashSecretToken(input.refreshToken);
  // Hashes are compared in code here, so in constant time (decision 0171).
  if (amongSecretHashes(family.rotated_hashes, hash)) {
    await revokeFamily(family._id, 'rotated refresh token reused', now);
    throw new OAuthError('invalid_grant', 'the refresh token has already been used; every token of this connection is revoked');
  }
  if (!sameSecretHash(family.current_hash, hash) || family.current_expires_at <= now) throw invalid;
  if (input.resource !== undefined && input.resource.replace(/\/+$/, '') !== family.resource) {
    throw new OAuthError('invalid_target', 'resource must be the one the app was authorized for');
  }
  // The member may have left the workspace since: the connection ends with the membership.
  const membership = await Membership.findOne({ workspace_id: family.workspace_id, user_id: family.user_id }, { _id: 1 }).lean();
  if (!membership) {
    await revokeFamily(family._id, 'member left the workspace', now);
    throw invalid;
  }

  const next = REFRESH_TOKEN_PREFIX + family._id + secret();
  const rotated = await OAuthRefreshToken.updateOne(
    { _id: family._id, current_hash: hash, revoked_at: null },
    {
      $set: { current_hash: hashSecretToken(next), current_expires_at: later(now, OAUTH_LIFETIMES.refreshTokenSeconds), refreshed_at: now },
      $push: { rotated_hashes: hash },
    },
  );
  if (rotated.modifiedCount !== 1) {
    // Another request spent the same token first: two uses of one refresh token.
    await revokeFamily(family._id, 'rotated refresh token reused', now);
    throw new OAuthError('invalid_grant', 'the refresh token has already been used; every token of this connection is revoked');
  }
  const access = await issueAccessToken(family, now);
  return { ...access, refresh_token: next };
}

/** A new access token of the family, recorded in it so that revoking the family stops it. */
async function issueAccessToken(family: Pick<Family, '_id' | 'workspace_id' | 'user_id' | 'client_id' | 'client_name'>, now: Date) {
  const issued = await issueOAuthToken({
    workspaceId: family.workspace_id,
    userId: family.user_id,
    clientId: family.client_id,
    clientName: family.client_name,
    ttlSeconds: OAUTH_LIFETIMES.accessTokenSeconds,
    now,
  });
  await OAuthRefreshToken.updateOne({ _id: family._id }, { $push: { access_tokens: { id: issued.id, expires_at: issued.expiresAt } } });
  await OAuthRefreshToken.updateOne({ _id: family._id }, { $pull: { access_tokens: { expires_at: { $lte: now } } } });
  // Revoked while this token was being issued: it must not outlive the family.
  const after = await OAuthRefreshToken.findById(family._id, { revoked_at: 1 }).lean();
  if (after?.revoked_at) {
    await revokeOAuthToken(issued.id, now);
    throw new OAuthError('invalid_grant', 'the connection has been revoked');
  }
  return { access_token: issued.token, token_type: 'Bearer' as const, expires_in: OAUTH_LIFETIMES.accessTokenSeconds };
}

function familyIdOf(refreshToken: string): string | null {
  if (!refreshToken.startsWith(REFRESH_TOKEN_PREFIX)) return null;
  const id = refreshToken.slice(REFRESH_TOKEN_PREFIX.length, REFRESH_TOKEN_PREFIX.length + FAMILY_ID_LENGTH);
  return /^[0-9a-f]{32}$/.test(id) ? id : null;
}

/**
 * Ends a connection: its refresh token stops, and so does every access token issued in it
 * (they are read on every request, so at once in every API process). Answers whether the
 * connection was still active.
 */
export async function revokeFamily(id: string, reason: string, now: Date): Promise<boolean> {
  const result = await OAuthRefreshToken.updateOne({ _id: id, revoked_at: null }, { $set: { revoked_at: now, revoked_reason: reason } });
  const family = await OAuthRefreshToken.findById(id, { access_tokens: 1 }).lean<Pick<Family, 'access_tokens'>>();
  for (const token of family?.access_tokens ?? []) if (token.id) await revokeOAuthToken(token.id, now);
  return result.modifiedCount === 1;
}

/**
 * Token revocation (RFC 7009) by the app itself. A refresh token ends its connection; an
 * access token stops alone. Unknown tokens, and tokens of another client, are not an error.
 */
export async function revokePresentedToken(token: string, clientId: string, now: Date): Promise<void> {
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) {
    const familyId = familyIdOf(token);
    const family = familyId ? await OAuthRefreshToken.findById(familyId, { client_id: 1, current_hash: 1, rotated_hashes: 1 }).lean<Family>() : null;
    const hash = hashSecretToken(token);
    if (family && family.client_id === clientId && amongSecretHashes([family.current_hash, ...family.rotated_hashes], hash)) {
      await revokeFamily(family._id, 'revoked by the app', now);
    }
    return;
  }
  if (token.startsWith(OAUTH_TOKEN_PREFIX)) {
    const stored = await OAuthToken.findOne({ token_hash: hashSecretToken(token) }, { client_id: 1 }).lean();
    if (stored && stored.client_id === clientId) await revokeOAuthToken(stored._id, now);
  }
}
