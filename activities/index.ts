import { createKycActivities } from './kyc';
import { createProbeActivities } from './probes';
import { createWebhookActivities, type WebhookDeps } from './webhooks';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface ActivityDeps extends WebhookDeps {
  clock: Clock;
}

/**
 * Every activity, built from its dependencies. Workflows see only the type
 * (`ReturnType<typeof createActivities>`), never these values.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createProbeActivities(deps),
    ...createKycActivities(deps),
    ...createWebhookActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
