import type { Request } from 'express';
import { newId } from '../../db/ids';
import { Session } from '../../db/models/session';
import type { AuthDeps } from './deps';

/** Two-factor challenges are good for this long after the password was checked. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

/** Opens a session record and signs a token naming it. */
export async function startSession(userId: string, req: Request, deps: AuthDeps): Promise<{ token: string; expires_at: Date }> {
  const now = deps.now();
  const expiresAt = new Date(now.getTime() + deps.config.sessionTtlSeconds * 1000);
  const sessionId = newId();
  await Session.create({
    _id: sessionId,
    user_id: userId,
    created_at: now,
    last_used_at: now,
    expires_at: expiresAt,
    ip: clientIp(req),
    user_agent: req.get('User-Agent')?.slice(0, 300) ?? null,
  });
  const token = await deps.tokens.sign({ userId, sessionId, purpose: 'session' }, expiresAt);
  return { token, expires_at: expiresAt };
}

/** Ends every open session of a user, except `keep` when given. Returns how many ended. */
export async function revokeSessions(userId: string, now: Date, keep?: string): Promise<number> {
  const filter: Record<string, unknown> = { user_id: userId, revoked_at: null };
  if (keep) filter._id = { $ne: keep };
  const result = await Session.updateMany(filter, { $set: { revoked_at: now } });
  return result.modifiedCount;
}

export function clientIp(req: Request): string | null {
  return req.ip ?? req.socket.remoteAddress ?? null;
}
