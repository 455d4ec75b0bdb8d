import { createSlotActivities } from './calls/slots';
import { createCallQueueActivities } from './calls/queue';
import { createCallTelephonyActivities, type TelephonyDeps } from './calls/telephony';
import { createKycActivities } from './kyc';
import { createProbeActivities } from './probes';
import { createWebhookActivities, type WebhookDeps } from './webhooks';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface ActivityDeps extends WebhookDeps, TelephonyDeps {
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
    ...createCallQueueActivities(deps),
    ...createCallTelephonyActivities(deps),
    ...createSlotActivities(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
