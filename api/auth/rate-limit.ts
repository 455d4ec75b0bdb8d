import { isDuplicateKeyError } from '../../db/errors';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, RateWindow, rateWindowId, type RateLimitedKind } from '../../db/models/rate-window';

export { DEFAULT_RATE_LIMIT_PER_MINUTE };

export interface RateLimitState {
  limit: number;
  /** Requests left in this window after this one (never below 0). */
  remaining: number;
  /** Unix seconds when the window ends. */
  resetAt: number;
  /** Seconds until then (at least 1); the 429's `Retry-After`. */
  retryAfter: number;
  exceeded: boolean;
}

/** Unix seconds at which the calendar minute of `now` began. */
export function windowStartOf(now: Date): number {
  return Math.floor(now.getTime() / 60_000) * 60;
}

/**
 * Counts one request of a credential in the calendar minute of `now` and answers the count,
 * or null when the credential has no counter document yet (`ensure` then creates it).
 *
 * One update whose filter is the exact `_id`: on MongoDB an atomic `$inc`, on FerretDB v1
 * (SQLite) the one filter it pushes down to SQL. Every API process counts in the same
 * document, so they share the window. Callers run this beside the credential lookup (it
 * does not depend on it), so counting adds no round trip; a request with a revoked
 * credential is counted too, which changes nothing.
 */
export async function countRequest(kind: RateLimitedKind, credentialId: string, now: Date, ensure = false): Promise<number | null> {
  const windowStart = windowStartOf(now);
  const field = `m${windowStart}`;
  const _id = rateWindowId(kind, credentialId);
  const update = { $inc: { [`counts.${field}`]: 1 }, $set: { last_used_at: now } };
  let doc: { counts?: Record<string, number> } | null;
  try {
    doc = await RateWindow.findOneAndUpdate({ _id }, update, { returnDocument: 'after', upsert: ensure }).lean();
  } catch (err) {
    // Two first requests raced to create the document: the loser counts in the winner's.
    if (!ensure || !isDuplicateKeyError(err)) throw err;
    doc = await RateWindow.findOneAndUpdate({ _id }, update, { returnDocument: 'after' }).lean();
  }
  if (!doc) return null;
  const counts = doc.counts ?? {};
  const stale = Object.keys(counts).filter((k) => k !== field);
  // Earlier minutes are never read again; drop them so the document stays one field long.
  if (stale.length) await RateWindow.updateOne({ _id }, { $unset: Object.fromEntries(stale.map((k) => [`counts.${k}`, 1])) });
  return counts[field] ?? 1;
}

/** The headers' numbers for `count` requests in the window of `now`. */
export function rateLimitState(limit: number | null | undefined, count: number, now: Date): RateLimitState {
  const perMinute = limit ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  const resetAt = windowStartOf(now) + 60;
  return {
    limit: perMinute,
    remaining: Math.max(0, perMinute - count),
    resetAt,
    retryAfter: Math.max(1, resetAt - Math.floor(now.getTime() / 1000)),
    exceeded: count > perMinute,
  };
}

/** When credentials were last used, by credential id (for lists). */
export async function lastUsedAt(kind: RateLimitedKind, credentialIds: string[]): Promise<Map<string, Date>> {
  if (!credentialIds.length) return new Map();
  const docs = await RateWindow.find({ _id: { $in: credentialIds.map((id) => rateWindowId(kind, id)) } }, { last_used_at: 1 }).lean();
  const prefix = `${kind}:`;
  return new Map(docs.filter((d) => d.last_used_at).map((d) => [d._id.slice(prefix.length), d.last_used_at as Date]));
}
