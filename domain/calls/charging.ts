import { Workspace } from '../../db/models/workspace';
import { appendLedgerItem, balanceOf } from '../billing/ledger';
import { planOf } from '../billing/plans';

/**
 * Billing rules 1, 2 and 4 of the contract: a connected call costs
 * `ceil(duration_seconds * price_per_minute_paise / 60)`, taken once when it ends as one
 * `call` ledger item; its length is capped at what the balance pays for when it starts.
 */

export interface CallCap {
  capSeconds: number;
  /** `hangup_reason` when the cap ends the call. */
  capReason: 'max duration reached' | 'credits ran out';
}

export function callCost(durationSeconds: number, pricePerMinutePaise: number): number {
  // Rounded to the microsecond first, so that 0.1 + 0.2 style float noise never adds a paisa.
  return Math.ceil(Math.round((durationSeconds * pricePerMinutePaise * 1e6) / 60) / 1e6);
}

async function pricePerMinute(workspaceId: string): Promise<number> {
  const workspace = await Workspace.findById(workspaceId, { plan: 1 }).lean();
  if (!workspace) throw new Error(`workspace ${workspaceId} not found`);
  return planOf(workspace.plan).pricePerMinutePaise;
}

/** The length a call may last from now: `max_duration_seconds`, or less when the balance pays for less. */
export async function callCapOf(workspaceId: string, maxDurationSeconds: number): Promise<CallCap> {
  const [price, balance] = await Promise.all([pricePerMinute(workspaceId), balanceOf(workspaceId)]);
  const affordable = Math.max(0, Math.floor((balance * 60) / price));
  return affordable < maxDurationSeconds
    ? { capSeconds: affordable, capReason: 'credits ran out' }
    : { capSeconds: maxDurationSeconds, capReason: 'max duration reached' };
}

export interface CallCharge {
  costPaise: number;
  balanceAfterPaise: number;
}

/**
 * Takes a connected call's cost from the ledger once: the item's idempotency key is the call
 * id, so a retry finds the first item and writes nothing again. Answers what was charged.
 */
export async function chargeLedgerForCall(input: {
  callId: string;
  workspaceId: string;
  durationSeconds: number;
  bridgedSeconds?: number;
  endedAt: string;
}): Promise<CallCharge> {
  const price = await pricePerMinute(input.workspaceId);
  // A call transferred to a person: the bridged time at the same price, in the same item
  // (docs/decisions/0160): ceil((duration_seconds + bridged_seconds) * price / 60).
  const bridged = input.bridgedSeconds ?? 0;
  const cost = callCost(input.durationSeconds + bridged, price);
  const item = await appendLedgerItem({
    workspaceId: input.workspaceId,
    kind: 'call',
    amountPaise: -cost,
    idempotencyKey: `call:${input.callId}`,
    at: new Date(input.endedAt),
    note: bridged
      ? `call ${input.callId}: ${input.durationSeconds} s live + ${bridged} s bridged at ${price} paise a minute`
      : `call ${input.callId}: ${input.durationSeconds} s at ${price} paise a minute`,
    callId: input.callId,
  });
  return { costPaise: -item.amount_paise, balanceAfterPaise: item.balance_after_paise };
}
