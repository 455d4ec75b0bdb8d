import { createHash, randomInt } from 'node:crypto';
import { isDuplicateKeyError } from '../../db/errors';
import { LedgerHead, LedgerItem, type LedgerKind } from '../../db/models/ledger-item';

export interface LedgerEntry {
  workspaceId: string;
  kind: LedgerKind;
  amountPaise: number;
  /** Names the change for good (a call id, a payment id): applying it twice is impossible. */
  idempotencyKey: string;
  at: Date;
  note?: string;
  callId?: string | null;
  paymentId?: string | null;
  byName?: string | null;
}

const MAX_ATTEMPTS = 50;
/** Attempts that trust the head after a lost race before reading the ledger's tail (a scan on FerretDB). */
const HEAD_ATTEMPTS_BEFORE_TAIL = 3;

/**
 * Appends one item to a workspace's ledger and returns it (or the item already written under
 * the same idempotency key). Without transactions, the unique `(workspace_id, seq)` index is
 * what serialises writers: each takes the next number after the head (`ledger_heads`, read
 * by id), and whoever loses the race reads the head again and tries the next number.
 *
 * Appends of one workspace in this process go one at a time: racing each other would only
 * make all but one of them lose and try again (50 calls ending together made hundreds of
 * attempts, and the database slowed every one of them). Other processes still race, and
 * the index decides.
 */
export function appendLedgerItem(entry: LedgerEntry) {
  return inWorkspaceOrder(entry.workspaceId, () => appendOnce(entry));
}

async function appendOnce(entry: LedgerEntry) {
  // The item's id comes from its idempotency key: "was it applied?" is a read by id (FerretDB
  // scans for any other filter), and a second insert of the same change fails on `_id` too.
  const itemId = ledgerItemIdFor(entry.idempotencyKey);
  const applied = () => LedgerItem.findById(itemId).lean();
  const existing = await applied();
  if (existing) return existing;
  let tail = await ledgerHead(entry.workspaceId);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const item = {
      _id: itemId,
      workspace_id: entry.workspaceId,
      seq: (tail?.seq ?? 0) + 1,
      idempotency_key: entry.idempotencyKey,
      at: entry.at,
      kind: entry.kind,
      amount_paise: entry.amountPaise,
      balance_after_paise: (tail?.balance_after_paise ?? 0) + entry.amountPaise,
      note: entry.note ?? '',
      call_id: entry.callId ?? null,
      payment_id: entry.paymentId ?? null,
      by_name: entry.byName ?? null,
    };
    try {
      await LedgerItem.create(item);
      await advanceHead(entry.workspaceId, item);
      return item;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    // Either this change was applied meanwhile, or another writer took the sequence number.
    const done = await applied();
    if (done) {
      await advanceHead(entry.workspaceId, done);
      return done;
    }
    // The winner moves the head right after its insert: after a random pause (so that many
    // writers do not collide again in step) the head is usually past the number lost. A head
    // still behind means a writer between its insert and its head update, or one that died
    // there: after a few tries the ledger's tail is read and the head repaired.
    await new Promise((resolve) => setTimeout(resolve, randomInt(2, 10 + 5 * attempt)));
    const head = await LedgerHead.findById(entry.workspaceId).lean();
    if (head && head.seq >= item.seq) tail = head;
    else if (attempt + 1 >= HEAD_ATTEMPTS_BEFORE_TAIL) {
      tail = await ledgerTail(entry.workspaceId);
      if (tail) await advanceHead(entry.workspaceId, tail);
    }
  }
  throw new Error(`could not append to the ledger of workspace ${entry.workspaceId} after ${MAX_ATTEMPTS} attempts`);
}

/** The appends of one workspace in this process, chained: each starts when the one before has ended. */
const workspaceQueues = new Map<string, Promise<unknown>>();

function inWorkspaceOrder<T>(workspaceId: string, append: () => Promise<T>): Promise<T> {
  const before = workspaceQueues.get(workspaceId) ?? Promise.resolve();
  const result = before.then(append, append);
  const settled = result.then(
    () => undefined,
    () => undefined,
  );
  workspaceQueues.set(workspaceId, settled);
  // The last one out removes the chain, so the map holds only workspaces with appends in flight.
  void settled.then(() => {
    if (workspaceQueues.get(workspaceId) === settled) workspaceQueues.delete(workspaceId);
  });
  return result;
}

/** The head, or the ledger's tail when the workspace has no head yet (items written before heads existed). */
async function ledgerHead(workspaceId: string): Promise<{ seq: number; balance_after_paise: number } | null> {
  const head = await LedgerHead.findById(workspaceId).lean();
  if (head) return head;
  const tail = await ledgerTail(workspaceId);
  if (tail) await advanceHead(workspaceId, tail);
  return tail;
}

/** Moves the head forward to `item`, never back (concurrent writers may finish in any order). */
async function advanceHead(workspaceId: string, item: { seq: number; balance_after_paise: number }): Promise<void> {
  const fields = { seq: item.seq, balance_after_paise: item.balance_after_paise };
  const moved = await LedgerHead.updateOne({ _id: workspaceId, seq: { $lt: item.seq } }, { $set: fields });
  if (moved.matchedCount) return;
  try {
    await LedgerHead.create({ _id: workspaceId, ...fields });
  } catch (err) {
    // It exists (at this item or past it): nothing to do.
    if (!isDuplicateKeyError(err)) throw err;
  }
}

/** A ledger item's id: the first 128 bits of SHA-256 of its idempotency key, in hex (32 characters, like every id). */
export function ledgerItemIdFor(idempotencyKey: string): string {
  return createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32);
}

/** A workspace's credits: the newest ledger item's `balance_after_paise` (0 before any), read from the head. */
export async function balanceOf(workspaceId: string): Promise<number> {
  return (await ledgerHead(workspaceId))?.balance_after_paise ?? 0;
}

/** The workspace's newest ledger item (highest `seq`), or null before any. */
function ledgerTail(workspaceId: string) {
  return LedgerItem.findOne({ workspace_id: workspaceId }, { seq: 1, balance_after_paise: 1 }).sort({ seq: -1 }).lean();
}
