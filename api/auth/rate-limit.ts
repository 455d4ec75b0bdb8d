import type { Model } from 'mongoose';

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 120;

export interface RateWindowFields {
  rate_limit_per_minute: number;
  rate_window_start: number;
  rate_window_count: number;
}

export interface CountedRequest<T> {
  credential: T;
  limit: number;
  /** Requests left in this window after this one (never below 0). */
  remaining: number;
  /** Unix seconds when the window ends. */
  resetAt: number;
  exceeded: boolean;
}

/**
 * Counts one request against a credential in the current calendar minute and returns the
 * credential, or null when no valid credential matches `filter` (unknown, revoked, expired).
 *
 * The count lives on the credential's document, so a single atomic update both checks that
 * the credential is still valid and counts the request: revocation takes effect at once in
 * every API process, and processes share one count. A new minute resets the counter with a
 * guarded update (`rate_window_start < now's window`); when two processes race to reset, the
 * loser's guard fails and it counts in the fresh window instead.
 */
export async function countRequest<T extends RateWindowFields>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any credential model with the rate-window fields
  model: Model<any>,
  filter: Record<string, unknown>,
  now: Date,
  extraSet: Record<string, unknown> = {},
): Promise<CountedRequest<T> | null> {
  const windowStart = Math.floor(now.getTime() / 60_000) * 60;
  const inWindow = () =>
    model
      .findOneAndUpdate({ ...filter, rate_window_start: windowStart }, { $inc: { rate_window_count: 1 }, $set: { last_used_at: now, ...extraSet } }, { returnDocument: 'after' })
      .lean<T>();
  let credential = await inWindow();
  if (!credential) {
    credential = await model
      .findOneAndUpdate(
        { ...filter, rate_window_start: { $lt: windowStart } },
        { $set: { rate_window_start: windowStart, rate_window_count: 1, last_used_at: now, ...extraSet } },
        { returnDocument: 'after' },
      )
      .lean<T>();
  }
  // Lost a reset race to another process (or the credential is not valid): count once more.
  credential ??= await inWindow();
  if (!credential) return null;
  const limit = credential.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  return {
    credential,
    limit,
    remaining: Math.max(0, limit - credential.rate_window_count),
    resetAt: windowStart + 60,
    exceeded: credential.rate_window_count > limit,
  };
}
