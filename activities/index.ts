import { createAnalyticsActivities } from './calls/analytics';
import { createBatchActivities } from './batches';
import { createSlotActivities } from './calls/slots';
import { createCallQueueActivities } from './calls/queue';
import { createCallStepActivities } from './calls/steps';
import { createCallTelephonyActivities, type TelephonyDeps } from './calls/telephony';
import { createKycActivities } from './kyc';
import { createProbeActivities } from './probes';
import { createWebhookActivities, type WebhookDeps } from './webhooks';
import type { LanguageModel } from '../providers/llm/types';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface ActivityDeps extends WebhookDeps, TelephonyDeps {
  clock: Clock;
  /** The language model of a catalog provider id (post-call analytics); absent in workers without analytics. */
  languageModelFor?: (provider: string) => LanguageModel;
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
    ...createCallStepActivities(deps),
    ...createCallTelephonyActivities(deps),
    ...createSlotActivities(deps),
    ...createAnalyticsActivities(deps),
    ...createBatchActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
