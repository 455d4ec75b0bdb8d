import { isDuplicateKeyError } from '../../db/errors';
import { DialPace } from '../../db/models/dial-pace';

/**
 * New calls dialled no faster than the provider account takes them (docs/decisions/0166). Plivo
 * limits an account's outbound calls per second (CPS; 2 by default, and in India the concurrency
 * limit is CPS x 25) and queues what comes faster on its side, where we can neither see nor
 * cancel it. So each dial takes the next free moment, `1 / cps` seconds after the one before,
 * from one row every worker node shares; the call's workflow waits for its moment on a durable
 * timer. A workflow task can run late (a busy worker), and a late dial would bunch with the next
 * one: so, last, the dial itself goes only once one interval has passed since the dial sent before
 * it (takeDialTurn), else its workflow waits a fraction of a second more.
 */

const PACE_ID = 'telephony';

export interface DialMoment {
  /** When the call may be dialled (now, or later). */
  at: Date;
  /** Dials already given a moment before this one's. */
  ahead: number;
}

/**
 * Takes the next moment a call may be dialled, at `dialsPerSecond` across every node: the later
 * of `now` and the row's `next_at`, which moves on by one interval. Compare-and-set on `next_at`
 * (FerretDB has no transactions): a writer that lost the race reads again.
 */
export async function takeDialMoment(dialsPerSecond: number, now: Date): Promise<DialMoment> {
  const intervalMs = 1000 / dialsPerSecond;
  for (;;) {
    const pace = await paceRow();
    const at = Math.max(now.getTime(), pace.next_at.getTime());
    const { modifiedCount } = await DialPace.updateOne({ _id: PACE_ID, next_at: pace.next_at }, { $set: { next_at: new Date(at + intervalMs) } });
    if (modifiedCount === 1) return { at: new Date(at), ahead: Math.round((at - now.getTime()) / intervalMs) };
  }
}

/**
 * The dial's turn: when one interval has passed since the last dial any node sent, this one is
 * recorded as sent now (compare-and-set on `last_sent_at`) and may go; otherwise `retryAt`, when
 * it may ask again. Called right before the provider's request, inside the dial.
 */
export async function takeDialTurn(dialsPerSecond: number): Promise<{ retryAt: Date | null }> {
  const intervalMs = 1000 / dialsPerSecond;
  for (;;) {
    const pace = await paceRow();
    const now = Date.now();
    const turnAt = pace.last_sent_at ? pace.last_sent_at.getTime() + intervalMs : now;
    if (turnAt > now) return { retryAt: new Date(turnAt) };
    const { modifiedCount } = await DialPace.updateOne({ _id: PACE_ID, last_sent_at: pace.last_sent_at ?? null }, { $set: { last_sent_at: new Date(now) } });
    if (modifiedCount === 1) return { retryAt: null };
  }
}

/**
 * The pace's row, made on the first dial ever (no moment given, no dial sent: both takers then
 * start from now). Two nodes making it at once: the unique `_id` keeps one, and both read it.
 */
async function paceRow(): Promise<{ next_at: Date; last_sent_at?: Date | null }> {
  for (;;) {
    const pace = await DialPace.findById(PACE_ID).lean();
    if (pace) return pace;
    try {
      await DialPace.create({ _id: PACE_ID, next_at: new Date(0), last_sent_at: null });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }
}
