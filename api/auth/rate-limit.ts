import type { mongo } from 'mongoose';
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

/** What a credential document that counts its own requests holds (`requestCountFields`). */
export interface CountedDocument {
  _id: string;
  counts?: Record<string, number> | null;
}

/**
 * Reads a credential (API key, connected-app token) by `_id` and counts one request in the
 * calendar minute of `now`, in one round trip: answers the credential as it is after the
 * count, with the count, or null when there is no such credential.
 *
 * One `findOneAndUpdate` whose filter is the exact `_id` (the one filter FerretDB v1 pushes
 * down to SQLite): on MongoDB an atomic `$inc`, and on the patched FerretDB one step per
 * collection, so a revocation is never written over and no count is lost. Every API process
 * counts in the credential's own document, so they share the window. A revoked or expired
 * credential is counted too, which changes nothing: the caller refuses it.
 */
export async function readAndCount<T extends CountedDocument>(
  collection: mongo.Collection<T>,
  id: string,
  now: Date,
): Promise<{ credential: T; count: number } | null> {
  const field = minuteField(now);
  // The driver's collection, not the model: nothing to cast or hydrate on the hot path.
  const filter = { _id: id } as mongo.Filter<T>;
  const update = { $inc: { [`counts.${field}`]: 1 }, $set: { last_used_at: now } } as unknown as mongo.UpdateFilter<T>;
  const credential = (await collection.findOneAndUpdate(filter, update, { returnDocument: 'after' })) as T | null;
  if (!credential) return null;
  const counts = credential.counts ?? {};
  const stale = Object.keys(counts).filter((k) => k !== field);
  // Earlier minutes are never read again; drop them (once a minute) so the document stays small.
  if (stale.length) await collection.updateOne(filter, { $unset: Object.fromEntries(stale.map((k) => [`counts.${k}`, 1])) } as mongo.UpdateFilter<T>);
  return { credential, count: counts[field] ?? 1 };
}

function minuteField(now: Date): string {
  return `m${windowStartOf(now)}`;
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

/**
 * When credentials were last used, by credential id (for lists): the credential's own
 * `last_used_at`, or for one not used since the counts moved onto credentials (its document
 * has no `last_used_at` field at all), its old `rate_windows` document.
 */
export async function lastUsedAt(kind: RateLimitedKind, credentials: { _id: string; last_used_at?: Date | null }[]): Promise<Map<string, Date>> {
  const used = new Map<string, Date>();
  const older: string[] = [];
  for (const c of credentials) {
    if (c.last_used_at) used.set(c._id, c.last_used_at);
    else if (c.last_used_at === undefined) older.push(c._id);
  }
  if (!older.length) return used;
  const docs = await RateWindow.find({ _id: { $in: older.map((id) => rateWindowId(kind, id)) } }, { last_used_at: 1 }).lean();
  const prefix = `${kind}:`;
  for (const d of docs) if (d.last_used_at) used.set(d._id.slice(prefix.length), d.last_used_at);
  return used;
}
