import { isDuplicateKeyError } from './errors';

/**
 * Exact limits on a store without atomic guarded updates (FerretDB): each member of a limited
 * set holds one of a fixed number of slots under a unique index. Inserts the first free slot,
 * in order, and answers it; null when every slot is taken. Of two callers inserting the same
 * slot, the unique index lets one win and the other moves on to the next free slot.
 */
export async function claimFirstFreeSlot<S>(slots: readonly S[], taken: ReadonlySet<S>, insert: (slot: S) => Promise<unknown>): Promise<S | null> {
  for (const slot of slots) {
    if (taken.has(slot)) continue;
    try {
      await insert(slot);
      return slot;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }
  return null;
}
