import { Schema, model, type InferSchemaType } from 'mongoose';

export const LEDGER_KINDS = ['grant', 'topup', 'call', 'adjustment'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * One change of a workspace's credits. The ledger is the truth: the balance is the newest
 * item's `balance_after_paise`. `(workspace_id, seq)` is unique so two writers cannot both
 * extend the same predecessor, and `idempotency_key` is unique so a retry applies nothing twice.
 */
const ledgerItemSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    seq: { type: Number, required: true },
    idempotency_key: { type: String, required: true },
    at: { type: Date, required: true },
    kind: { type: String, enum: LEDGER_KINDS, required: true },
    amount_paise: { type: Number, required: true },
    balance_after_paise: { type: Number, required: true },
    note: { type: String, default: '' },
    call_id: { type: String, default: null },
    payment_id: { type: String, default: null },
    by_name: { type: String, default: null },
  },
  { collection: 'ledger_items', versionKey: false },
);
ledgerItemSchema.index({ workspace_id: 1, seq: -1 }, { unique: true });
ledgerItemSchema.index({ idempotency_key: 1 }, { unique: true });

export type LedgerItemDocument = InferSchemaType<typeof ledgerItemSchema>;
export const LedgerItem = model('LedgerItem', ledgerItemSchema);

/**
 * The newest item of a workspace's ledger (`_id` is the workspace id): its `seq` and
 * `balance_after_paise`, read by id instead of sorting the ledger (FerretDB scans for that).
 * It only moves forward and may lag an item being written by a few milliseconds; the ledger
 * items stay the truth, and a writer that finds the head stale repairs it from them.
 */
const ledgerHeadSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    balance_after_paise: { type: Number, required: true },
  },
  { collection: 'ledger_heads', versionKey: false },
);

export const LedgerHead = model('LedgerHead', ledgerHeadSchema);
