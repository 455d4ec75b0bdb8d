import { Workspace } from '../../db/models/workspace';
import { balanceOf } from './ledger';
import { planOf, type Plan } from './plans';

/** Fewer minutes than this at the plan's price make the balance low (contract, "Limits"). */
export const LOW_BALANCE_MINUTES = 10;

export interface BalanceSummary {
  credits_paise: number;
  price_per_minute_paise: number;
  minutes_left: number;
  low_balance: boolean;
  plan_name: string;
}

/**
 * The balance summary. `minutes_left` is rounded down to two decimals (never promising a
 * minute the balance cannot pay) and is 0 at or below a zero balance; `low_balance` compares
 * whole paise, so the boundary is exact: 10 minutes left is not low, a paisa less is.
 */
export function summarize(creditsPaise: number, plan: Plan): BalanceSummary {
  const price = plan.pricePerMinutePaise;
  return {
    credits_paise: creditsPaise,
    price_per_minute_paise: price,
    minutes_left: creditsPaise <= 0 ? 0 : Math.floor((creditsPaise * 100) / price) / 100,
    low_balance: creditsPaise < LOW_BALANCE_MINUTES * price,
    plan_name: plan.name,
  };
}

export async function balanceSummaryOf(workspaceId: string): Promise<BalanceSummary | null> {
  const [workspace, credits] = await Promise.all([Workspace.findById(workspaceId, { plan: 1 }).lean(), balanceOf(workspaceId)]);
  return workspace ? summarize(credits, planOf(workspace.plan)) : null;
}
