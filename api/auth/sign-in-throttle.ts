import { isDuplicateKeyError } from '../../db/errors';
import { SignInAttempt } from '../../db/models/sign-in-attempt';
import { HttpError } from '../../domain/shared/http-error';

/** The contract's allowance: 5 failed sign-ins per address in 5 minutes; more gives 429. */
export const ALLOWED_FAILURES = 5;
export const FAILURE_WINDOW_MS = 5 * 60_000;

/** Addresses are compared lowercased, as they are stored. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A claimed attempt: it counts as a failure unless the caller says it went well. */
export interface SignInAttemptClaim {
  /** The secret was right: every failure of the address is forgotten. */
  succeeded(): Promise<void>;
  /** The secret was right but the sign-in goes on (second factor): this attempt is not a failure. */
  release(): Promise<void>;
}

const slotIds = (address: string) => Array.from({ length: ALLOWED_FAILURES }, (_, slot) => `${address}#${slot}`);

/**
 * Claims one of the address's attempt slots before a password or code is checked, or answers
 * 429 with `Retry-After` when all of them hold failures younger than the window. Claiming
 * first (rather than counting failures afterwards) bounds concurrent guesses too: a burst of
 * parallel attempts gets at most 5 through, on MongoDB and on FerretDB.
 */
export async function claimSignInAttempt(email: string, now: Date): Promise<SignInAttemptClaim> {
  const address = normalizeEmail(email);
  const ids = slotIds(address);
  for (const id of ids) {
    if (await insertSlot(id, now)) return claim(address, id);
  }
  const held = await SignInAttempt.find({ _id: { $in: ids } }).lean();
  const expiredBefore = now.getTime() - FAILURE_WINDOW_MS;
  for (const slot of held.filter((s) => s.at.getTime() <= expiredBefore)) {
    // Whoever deletes and re-inserts first takes the expired slot; the others move on.
    await SignInAttempt.deleteOne({ _id: slot._id, at: slot.at });
    if (await insertSlot(slot._id, now)) return claim(address, slot._id);
  }
  const oldest = Math.min(...held.map((s) => s.at.getTime()), now.getTime());
  const retryAfter = Math.max(1, Math.ceil((oldest + FAILURE_WINDOW_MS - now.getTime()) / 1000));
  throw new HttpError(429, `too many failed sign-ins for this address; try again in ${retryAfter} seconds`, {}, { 'Retry-After': String(retryAfter) });
}

async function insertSlot(id: string, at: Date): Promise<boolean> {
  try {
    await SignInAttempt.create({ _id: id, at });
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

function claim(address: string, id: string): SignInAttemptClaim {
  return {
    succeeded: async () => {
      await SignInAttempt.deleteMany({ _id: { $in: slotIds(address) } });
    },
    release: async () => {
      await SignInAttempt.deleteOne({ _id: id });
    },
  };
}
