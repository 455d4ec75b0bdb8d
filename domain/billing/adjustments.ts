import { newId } from '../../db/ids';
import { isDuplicateKeyError } from '../../db/errors';
import { AuditEvent } from '../../db/models/audit-event';
import { LedgerItem } from '../../db/models/ledger-item';
import { Workspace } from '../../db/models/workspace';
import { appendLedgerItem, ledgerItemIdFor } from './ledger';

export interface Adjustment {
  workspaceId: string;
  /** Signed: credits given (positive) or taken back (negative); never 0. */
  amountPaise: number;
  note: string;
  /** The staff member, shown as the item's `by_name` and the audit event's actor. */
  by: string;
  /** Names the adjustment for good (a ticket id): running it again applies nothing. Default: a new one. */
  reference?: string;
  at: Date;
}

export type AdjustmentOutcome = { kind: 'no_workspace' } | { kind: 'applied' | 'already_applied'; itemId: string; balanceAfterPaise: number };

/**
 * A staff adjustment: one signed `adjustment` ledger item, recorded once in the workspace's
 * audit log. It may take the balance below zero (staff correct what the ledger says).
 */
export async function adjustCredits(adjustment: Adjustment): Promise<AdjustmentOutcome> {
  if (!Number.isInteger(adjustment.amountPaise) || adjustment.amountPaise === 0) throw new Error('an adjustment is a whole, non-zero number of paise');
  if (!(await Workspace.exists({ _id: adjustment.workspaceId }))) return { kind: 'no_workspace' };
  const key = `adjustment:${adjustment.workspaceId}:${adjustment.reference ?? newId()}`;
  const before = await LedgerItem.findById(ledgerItemIdFor(key), { balance_after_paise: 1 }).lean();
  if (before) return { kind: 'already_applied', itemId: before._id, balanceAfterPaise: before.balance_after_paise };
  const item = await appendLedgerItem({
    workspaceId: adjustment.workspaceId,
    kind: 'adjustment',
    amountPaise: adjustment.amountPaise,
    idempotencyKey: key,
    at: adjustment.at,
    note: adjustment.note,
    byName: adjustment.by,
  });
  // The audit event's id is the item's: two runs of one adjustment that race past the check
  // above append one item (same key) and record one event; the second learns it was a repeat.
  try {
    await AuditEvent.create({
      _id: item._id,
      workspace_id: adjustment.workspaceId,
      at: adjustment.at,
      action: 'billing.credits_adjusted',
      actor: { type: 'staff', id: null, name: adjustment.by },
      target: { type: 'ledger_item', id: item._id, name: null },
      ip: null,
      details: {
        amount_paise: adjustment.amountPaise,
        note: adjustment.note,
        balance_after_paise: item.balance_after_paise,
        reference: adjustment.reference ?? null,
      },
    });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return { kind: 'already_applied', itemId: item._id, balanceAfterPaise: item.balance_after_paise };
  }
  return { kind: 'applied', itemId: item._id, balanceAfterPaise: item.balance_after_paise };
}
