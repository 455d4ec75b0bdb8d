import { isDuplicateKeyError } from './db/errors';
import { newId } from './db/ids';
import { LedgerItem, type LedgerKind } from './db/models/ledger-item';

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

const MAX_ATTEMPTS = 20;

/**
 * Appends one item to a workspace's ledger and returns it (or the item already written under
 * the same idempotency key). Without transactions, the unique `(workspace_id, seq)` index is
 * what serialises writers: whoever loses the race for a sequence number reads the new tail
 * and tries again.
 */
export async function appendLedgerItem(entry: LedgerEntry) {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const existing = await LedgerItem.findOne({ idempotency_key: entry.idempotencyKey }).lean();
    if (existing) return existing;
    const tail = await ledgerTail(entry.workspaceId);
    const item = {
      _id: newId(),
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
      return item;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }
  throw new Error(`could not append to the ledger of workspace ${entry.workspaceId} after ${MAX_ATTEMPTS} attempts`);
}

/** A workspace's credits: the newest ledger item's `balance_after_paise` (0 before any). */
export async function balanceOf(workspaceId: string): Promise<number> {
  return (await ledgerTail(workspaceId))?.balance_after_paise ?? 0;
}

/** The workspace's newest ledger item (highest `seq`), or null before any. */
function ledgerTail(workspaceId: string) {
  return LedgerItem.findOne({ workspace_id: workspaceId }, { seq: 1, balance_after_paise: 1 }).sort({ seq: -1 }).lean();
}
