/** The plan a new workspace starts on (the plans themselves: domain/billing/plans.ts). */
export const DEFAULT_PLAN = 'starter';
