import type { Request, Response } from 'express';
import type { mongo } from 'mongoose';
import { findByIdOwned } from '../../db/by-id';
import { ApiKey } from '../../db/models/api-key';
import { OAuthToken } from '../../db/models/oauth-token';
import { Session, type SessionDocument } from '../../db/models/session';
import { User } from '../../db/models/user';
import { HttpError } from '../../domain/shared/http-error';
import type { Principal, WorkspaceSummary } from './context';
import { rateLimitState, readAndCount, type CountedDocument, type RateLimitState } from './rate-limit';
import { API_KEY_PREFIX, hashSecretToken, OAUTH_TOKEN_PREFIX, sameSecretHash } from './secret-tokens';
import type { SessionTokens } from './session-tokens';
import { readWorkspace, type WorkspaceCache } from './workspace-cache';

/** A 401 as the contract wants it: `WWW-Authenticate: Bearer`, and why in `detail`. */
export function unauthorized(detail: string, error?: 'invalid_token'): HttpError {
  return new HttpError(401, detail, {}, { 'WWW-Authenticate': error ? `Bearer error="${error}"` : 'Bearer' });
}

/** Session records are touched at most this often, so reads do not turn into writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface AuthenticateDeps {
  tokens: SessionTokens;
  now: () => Date;
  /** The workspaces keys and app tokens act in, reused for a moment (decision 0151). */
  workspaces: WorkspaceCache;
}

/**
 * The credentials a request carries: `X-API-Key`, then `Authorization: Bearer` of any kind.
 * A header that is sent counts even when it is empty or malformed (it is then invalid).
 */
export function presentedCredentials(req: Request): { apiKey?: string; bearer?: string } {
  const apiKey = req.get('X-API-Key')?.trim();
  const authorization = req.get('Authorization');
  if (authorization === undefined) return { apiKey };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthorized('the Authorization header must be "Bearer <token>"', 'invalid_token');
  return { apiKey, bearer: match[1] };
}

/**
 * Who the request is from, or a 401. Every credential the request carries must be valid: a
 * wrong `X-API-Key` next to a good bearer token (or the reverse) is 401, never served; with
 * two good ones, `X-API-Key` decides who acts. Keys and app tokens are counted against their
 * per-minute limit here (429 past it) and get the rate-limit headers on every response.
 */
export async function authenticate(req: Request, res: Response, deps: AuthenticateDeps): Promise<Principal> {
  const { apiKey, bearer } = presentedCredentials(req);
  if (apiKey === undefined && bearer === undefined) throw unauthorized('sign in, or send an API key in X-API-Key or Authorization: Bearer');
  if (apiKey !== undefined && !apiKey.startsWith(API_KEY_PREFIX)) throw unauthorized('X-API-Key does not hold an API key', 'invalid_token');
  // One after the other, the acting credential (X-API-Key when sent) last: each sets the
  // rate-limit headers, and the response must keep those of the one that acts.
  let principal: Principal | undefined;
  for (const presented of [bearer, apiKey]) {
    if (presented !== undefined) principal = await authenticateOne(req, res, presented, deps);
  }
  return principal!;
}

async function authenticateOne(req: Request, res: Response, presented: string, deps: AuthenticateDeps): Promise<Principal> {
  const now = deps.now();

  if (presented.startsWith(API_KEY_PREFIX)) {
    const found = await findCounted(req, deps, presented, now, ApiKey.collection as unknown as mongo.Collection<StoredKey>, (hash) =>
      ApiKey.findOne({ key_hash: hash }, KEY_FIELDS).lean<StoredKey>(),
    );
    if (!found) throw unauthorized('the API key is not valid or has been revoked', 'invalid_token');
    const { credential: key } = found;
    applyRateLimit(res, rateLimitState(key.rate_limit_per_minute, found.count, now));
    return { credential: { kind: 'api_key', keyId: key._id, name: key.name, workspaceId: key.workspace_id }, user: null };
  }

  if (presented.startsWith(OAUTH_TOKEN_PREFIX)) {
    const found = await findCounted(
      req,
      deps,
      presented,
      now,
      OAuthToken.collection as unknown as mongo.Collection<StoredToken>,
      (hash) => OAuthToken.findOne({ token_hash: hash }, TOKEN_FIELDS).lean<StoredToken>(),
      { idOf: (token) => token.user_id, load: (id) => User.findById(id, { name: 1, email: 1 }).lean() },
    );
    if (!found) throw unauthorized('the access token is not valid, has expired or has been revoked', 'invalid_token');
    const { credential: token, related: user } = found;
    applyRateLimit(res, rateLimitState(token.rate_limit_per_minute, found.count, now));
    if (!user) throw unauthorized('the access token belongs to an account that no longer exists', 'invalid_token');
    return {
      credential: { kind: 'oauth', tokenId: token._id, clientName: token.client_name, workspaceId: token.workspace_id },
      user: { id: user._id, name: user.name, email: user.email },
    };
  }

  const claims = await deps.tokens.verify(presented, 'session');
  if (!claims?.sessionId) throw unauthorized('the session token is not valid or has expired', 'invalid_token');
  const [session, user] = await Promise.all([
    findByIdOwned<SessionDocument>(Session, claims.sessionId, { user_id: claims.userId }),
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

function applyRateLimit(res: Response, state: RateLimitState): void {
  res.setHeader('X-RateLimit-Limit', String(state.limit));
  res.setHeader('X-RateLimit-Remaining', String(state.remaining));
  res.setHeader('X-RateLimit-Reset', String(state.resetAt));
  if (state.exceeded) throw new HttpError(429, 'rate limit exceeded; slow down', {}, { 'Retry-After': String(state.retryAfter) });
}

const KEY_FIELDS = { workspace_id: 1, name: 1, key_hash: 1, revoked_at: 1, rate_limit_per_minute: 1 } as const;
const TOKEN_FIELDS = { workspace_id: 1, user_id: 1, client_name: 1, token_hash: 1, revoked_at: 1, expires_at: 1, rate_limit_per_minute: 1 } as const;

interface StoredSecret extends CountedDocument {
  workspace_id: string;
  key_hash?: string;
  token_hash?: string;
  revoked_at?: Date | null;
  expires_at?: Date;
}

interface StoredKey extends StoredSecret {
  name: string;
  rate_limit_per_minute?: number | null;
}

interface StoredToken extends StoredSecret {
  user_id: string;
  client_name: string;
  rate_limit_per_minute?: number | null;
}

interface KnownSecret {
  id: string;
  workspaceId: string;
  relatedId?: string;
}

/**
 * The credential id of each secret's hash seen by this process (with its workspace and user,
 * which never change either). Only this immutable fact is cached: with it, a request reads
 * the credential by `_id` (the one lookup FerretDB v1 does without scanning the collection)
 * and counts itself in the same command, so a revocation counts at once everywhere.
 */
const idByHash = new Map<string, KnownSecret>();
const ID_CACHE_SIZE = 10_000;

function remember(hash: string, entry: KnownSecret): void {
  if (idByHash.size >= ID_CACHE_SIZE) idByHash.delete(idByHash.keys().next().value as string);
  idByHash.set(hash, entry);
}

function isUsable(credential: StoredSecret, hash: string, now: Date): boolean {
  if (!sameSecretHash(credential.key_hash ?? credential.token_hash ?? '', hash)) return false;
  if (credential.revoked_at) return false;
  return !credential.expires_at || credential.expires_at > now;
}

/** A record read beside the credential: the user of an app token. */
interface Related<T, R> {
  idOf: (credential: T) => string;
  load: (id: string) => Promise<R | null>;
}

/**
 * Finds the valid credential of a presented secret and counts the request. The credential is
 * read and counted in one command by `_id` (`readAndCount`), beside the related record and
 * the workspace; the first time this process sees the secret, a lookup by hash comes first.
 */
async function findCounted<T extends StoredSecret, R = never>(
  req: Request,
  deps: AuthenticateDeps,
  presented: string,
  now: Date,
  collection: mongo.Collection<T>,
  byHash: (hash: string) => Promise<T | null>,
  related?: Related<T, R>,
): Promise<{ credential: T; count: number; related: R | null } | null> {
  const hash = hashSecretToken(presented);
  let known = idByHash.get(hash);
  if (!known) {
    const found = await byHash(hash);
    if (!found || !isUsable(found, hash, now)) return null;
    known = { id: found._id, workspaceId: found.workspace_id, relatedId: related?.idOf(found) };
    remember(hash, known);
  }
  prefetchWorkspace(req, known.workspaceId, deps.workspaces);
  const [counted, relatedDoc] = await Promise.all([
    readAndCount(collection, known.id, now),
    related && known.relatedId !== undefined ? related.load(known.relatedId) : null,
  ]);
  if (!counted) idByHash.delete(hash);
  if (!counted || !isUsable(counted.credential, hash, now)) return null;
  return { credential: counted.credential, count: counted.count, related: relatedDoc };
}

const prefetched = new WeakMap<Request, { id: string; workspace: Promise<WorkspaceSummary | null> }>();

/**
 * Starts loading the workspace of a key or app token beside the credential itself, so that
 * the access step (`api/middleware/access.ts`) finds it without another round trip. The
 * workspace id is immutable; its record (name, status, plan) comes from the process's
 * short-lived cache (`WorkspaceCache`, at most 1 s old: decision 0151) or is read now.
 */
function prefetchWorkspace(req: Request, id: string, workspaces: WorkspaceCache): void {
  const workspace = workspaces.get(id);
  workspace.catch(() => undefined); // awaited by loadWorkspace, or dropped when auth fails first
  prefetched.set(req, { id, workspace });
}

/** The workspace as access decisions need it: loaded already beside the credential, or read now. */
export function loadWorkspace(req: Request, id: string): Promise<WorkspaceSummary | null> {
  const early = prefetched.get(req);
  return early?.id === id ? early.workspace : readWorkspace(id);
}
