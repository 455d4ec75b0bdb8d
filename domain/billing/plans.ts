/**
 * The plans the service starts with (contract, "Limits"). `null` means no limit. The billing
 * issue serves them at `GET /billing/plan`; limits are enforced where they are counted.
 */
export interface Plan {
  id: string;
  name: string;
  concurrentCalls: number;
  pricePerMinutePaise: number;
  maxAgents: number | null;
  maxMembers: number | null;
}

export const PLANS: Readonly<Record<string, Plan>> = {
  starter: { id: 'starter', name: 'Starter', concurrentCalls: 5, pricePerMinutePaise: 400, maxAgents: 10, maxMembers: 5 },
  growth: { id: 'growth', name: 'Growth', concurrentCalls: 20, pricePerMinutePaise: 350, maxAgents: 50, maxMembers: 20 },
  scale: { id: 'scale', name: 'Scale', concurrentCalls: 50, pricePerMinutePaise: 300, maxAgents: null, maxMembers: null },
};

export { DEFAULT_PLAN } from '../../contracts/plans';

export function planOf(id: string): Plan {
  const plan = PLANS[id];
  if (!plan) throw new Error(`unknown plan "${id}"`);
  return plan;
}
