import type { Client } from '@temporalio/client';
import type { Clock } from '../clock';
import { attemptDelivery, failDelivery, type AttemptInput } from '../../domain/webhooks/attempts';
import { recordEvent, type RecordEventInput } from '../../domain/webhooks/fan-out';
import { createRedeliveryActivities } from './redelivery';

export interface WebhookDeps {
  clock: Clock;
  /** Starts delivery workflows (fan-out); absent in workers that never fan out. */
  temporal?: Client;
  /** Whether deliveries may reach private and loopback addresses (WEBHOOKS_ALLOW_PRIVATE_NETWORKS). */
  webhooksAllowPrivateNetworks?: boolean;
  /** The target's answer time limit; the contract's 10 s unless a test shortens it. */
  webhookTimeoutMs?: number;
}

/** The webhook activities: fan-out of an event, one attempt of a delivery, failing a stopped delivery. */
export function createWebhookActivities(deps: WebhookDeps) {
  const guard = { allowPrivateNetworks: deps.webhooksAllowPrivateNetworks ?? false };
  return {
    async recordEvent(input: RecordEventInput) {
      if (!deps.temporal) throw new Error('recordEvent needs a Temporal client in the worker dependencies');
      return recordEvent(input, { temporal: deps.temporal, now: () => deps.clock.now() });
    },
    attemptWebhookDelivery(input: AttemptInput) {
      return attemptDelivery(input, { now: () => deps.clock.now(), guard, timeoutMs: deps.webhookTimeoutMs });
    },
    async failWebhookDelivery(input: { deliveryId: string; reason: string }): Promise<void> {
      await failDelivery(input.deliveryId, input.reason, deps.clock.now());
    },
    ...createRedeliveryActivities({ now: () => deps.clock.now() }),
  };
}
