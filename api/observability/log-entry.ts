import type { Request, Response } from 'express';
import { newId } from '../../db/ids';
import type { ServerLogDocument } from '../../db/models/server-log';
import type { Principal, WorkspaceAccess } from '../auth/context';
import { API_KEY_PREFIX, OAUTH_TOKEN_PREFIX, shownPrefix } from '../auth/secret-tokens';
import { sourceOf } from './log-sources';

export interface FinishedRequest {
  startedAt: Date;
  durationMs: number;
}

/**
 * The server-log entry of a finished API request, or null for a path outside the API. Reads
 * only what the request already holds (no database): the principal and workspace the access
 * step resolved, and the shown prefix of a presented key or app token (never the secret).
 */
export function serverLogEntry(req: Request, res: Response, finished: FinishedRequest): ServerLogDocument | null {
  const sourced = sourceOf(req.originalUrl.split('?')[0]);
  if (!sourced) return null;
  const workspace = (res.locals.workspaceAccess as WorkspaceAccess | undefined)?.workspace ?? null;
  return {
    _id: newId(),
    workspace_id: workspace?.id ?? null,
    at: finished.startedAt,
    source: sourced.source,
    method: req.method,
    path: sourced.path,
    status: res.statusCode,
    duration_ms: finished.durationMs,
    request_id: String(res.locals.requestId ?? ''),
    credential: credentialOf(req, res.locals.principal as Principal | undefined),
  };
}

function credentialOf(req: Request, principal: Principal | undefined): ServerLogDocument['credential'] {
  if (!principal) return { kind: 'none', id: null, prefix: null, name: null };
  const { credential, user } = principal;
  if (credential.kind === 'api_key') return { kind: 'api_key', id: credential.keyId, prefix: presentedPrefix(req, API_KEY_PREFIX), name: credential.name };
  if (credential.kind === 'oauth') {
    return {
      kind: 'oauth',
      id: credential.tokenId,
      prefix: presentedPrefix(req, OAUTH_TOKEN_PREFIX),
      name: `${user?.name ?? 'unknown'} via ${credential.clientName}`,
    };
  }
  return { kind: 'session', id: user?.id ?? null, prefix: null, name: user?.name ?? null };
}

/** The shown prefix of the key or token the request carried (session tokens are never shown). */
function presentedPrefix(req: Request, prefix: string): string | null {
  const bearer = /^Bearer\s+(\S+)/i.exec(req.get('Authorization') ?? '')?.[1];
  const presented = req.get('X-API-Key')?.trim() || bearer;
  return presented?.startsWith(prefix) ? shownPrefix(presented) : null;
}
