import { createAnalyticsActivities } from './calls/analytics';
import { createBatchActivities } from './batches';
import { createSlotActivities } from './calls/slots';
import { createCallQueueActivities } from './calls/queue';
import { createCallStepActivities } from './calls/steps';
import { createCallTelephonyActivities, type TelephonyDeps } from './calls/telephony';
import { createKycActivities } from './kyc';
import { createBillingActivities, type BillingDeps } from './billing';
import { createProbeActivities } from './probes';
import { createPrivacyActivities } from './privacy';
import { createRetentionActivities } from './retention';
import { createWebhookActivities, type WebhookDeps } from './webhooks';
import type { LanguageModel } from '../providers/llm/types';
import type { Synthesizer } from '../providers/tts/types';

import type { Clock } from './clock';

export { systemClock, type Clock } from './clock';

export interface ActivityDeps extends WebhookDeps, TelephonyDeps, BillingDeps {
  clock: Clock;
  /** The language model of a catalog provider id (post-call analytics); absent in workers without analytics. */
  languageModelFor?: (provider: string) => LanguageModel;
  /** How long KYC documents are kept after the decision (docs/decisions/0211; default 90 days, tests shorten it). */
  kycDocumentRetentionSeconds?: number;
  /** Speech synthesis: a welcome with the call's own values prepared while it rings (docs/decisions/0228). */
  synthesizer?: Synthesizer;
}

/**
 * The activities each task-queue role serves, named by the workflows that run there: a worker
 * registers its own domain, not every activity (workers/roles.ts).
 */
export const ACTIVITIES_BY_ROLE = {
  /** Call, slot keeper and batch workflows. */
  calls: (deps: ActivityDeps) => ({
    ...createCallQueueActivities(deps),
    ...createCallStepActivities(deps),
    ...createCallTelephonyActivities(deps),
    ...createSlotActivities(deps),
    ...createBatchActivities(deps),
  }),
  /** KYC reviews, erasures (docs/decisions/0209), the retention sweep (0215) and the health round trip. */
  ops: (deps: ActivityDeps) => ({
    ...createProbeActivities(deps),
    ...createKycActivities(deps),
    ...createPrivacyActivities(deps),
    ...createRetentionActivities(deps),
  }),
  /** Post-call analytics. */
  analytics: (deps: ActivityDeps) => createAnalyticsActivities(deps),
  /** Webhook deliveries, their retries and redeliveries. */
  webhooks: (deps: ActivityDeps) => createWebhookActivities(deps),
  /** Payment check workflows: the gateway's orders until paid (docs/decisions/0186). */
  billing: (deps: ActivityDeps) => createBillingActivities(deps),
};

/**
 * Every activity, built from its dependencies. Workflows see only the type
 * (`ReturnType<typeof createActivities>`), never these values; tests that run several
 * workflows on one queue register them all.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...ACTIVITIES_BY_ROLE.ops(deps),
    ...ACTIVITIES_BY_ROLE.webhooks(deps),
    ...ACTIVITIES_BY_ROLE.calls(deps),
    ...ACTIVITIES_BY_ROLE.analytics(deps),
    ...ACTIVITIES_BY_ROLE.billing(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
