import { CallbackNonce, callbackNonceId } from '../../db/models/callback-nonce';
import { isDuplicateKeyError } from '../../db/errors';

/**
 * Replayed telephony callbacks (docs/decisions/0177). Plivo's signature V3 has no timestamp: a
 * captured callback stays valid forever. Each one taken is remembered by its nonce and
 * signature for a window well past Plivo's own retries (a voice callback's retries end within
 * its 55 s total timeout; Plivo's longest documented schedule, for messaging, ends 7 minutes
 * after the first attempt), and a second request with both is refused.
 */
export const CALLBACK_REPLAY_WINDOW_MS = 15 * 60_000;
/** Expired entries are deleted by the process that next claims one, at most this often. */
const SWEEP_EVERY_MS = 60_000;
let nextSweepAt = 0;
/** The sweep under way, if any (a test waits for it). */
let sweeping: Promise<void> = Promise.resolve();

/**
 * Takes the callback's nonce and signature: true the first time (or once an earlier claim has
 * expired), false for a replay within the window. One insert on the unique `_id`, so two API
 * nodes racing on the same request cannot both win.
 */
export async function claimCallbackNonce(nonce: string, signature: string, now: Date): Promise<boolean> {
  const _id = callbackNonceId(nonce, signature);
  const expires_at = new Date(now.getTime() + CALLBACK_REPLAY_WINDOW_MS);
  // Not awaited: the claim below judges an expired entry itself, and a sweep (a range delete,
  // a write on the store) held the answer request that ran it for up to half a second in a
  // burst of calls, while the callee listened to silence.
  sweepExpired(now);
  try {
    await CallbackNonce.create({ _id, expires_at });
    return true;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
  // Seen before: a replay, unless its window is over and the sweep has not come by yet.
  const { modifiedCount } = await CallbackNonce.updateOne({ _id, expires_at: { $lte: now } }, { $set: { expires_at } });
  return modifiedCount === 1;
}

/** Forgets a claim whose request was not taken (an error, an aborted answer): the provider's retry of it must get through. */
export async function releaseCallbackNonce(nonce: string, signature: string): Promise<void> {
  await CallbackNonce.deleteOne({ _id: callbackNonceId(nonce, signature) });
}

/** The sweep started by the last claim that ran one, settled (failed sweeps are retried by the next claim). */
export function sweepSettled(): Promise<void> {
  return sweeping;
}

function sweepExpired(now: Date): void {
  if (now.getTime() < nextSweepAt) return;
  nextSweepAt = now.getTime() + SWEEP_EVERY_MS;
  sweeping = CallbackNonce.deleteMany({ expires_at: { $lt: now } }).then(
    () => undefined,
    () => {
      // Left for the next claim: until then an expired entry is still taken over by its request.
      nextSweepAt = 0;
    },
  );
}
