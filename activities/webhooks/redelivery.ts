import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { WebhookRedelivery } from '../../db/models/webhook-redelivery';
import type { FailedDelivery, RedeliveryProgress } from '../../contracts/webhooks';

export type { FailedDelivery } from '../../contracts/webhooks';

/** Failed deliveries of the endpoint created at or after `since`, in id order after `cursor`. */
function failedSince(endpointId: string, since: string, cursor: string | null) {
  return {
    endpoint_id: endpointId,
    status: 'failed' as const,
    created_at: { $gte: new Date(since) },
    target_deleted_at: null,
    ...(cursor ? { _id: { $gt: cursor } } : {}),
  };
}

/** The steps of the redelivery workflow that touch MongoDB; each is safe to retry. */
export function createRedeliveryActivities({ now }: { now: () => Date }) {
  return {
    async countFailedDeliveries(input: { redeliveryId: string; endpointId: string; since: string }): Promise<number> {
      const total = await WebhookDelivery.countDocuments(failedSince(input.endpointId, input.since, null));
      await WebhookRedelivery.updateOne({ _id: input.redeliveryId, total: null }, { $set: { total } });
      return total;
    },

    async listFailedDeliveries(input: { endpointId: string; since: string; cursor: string | null; limit: number }): Promise<FailedDelivery[]> {
      const page = await WebhookDelivery.find(failedSince(input.endpointId, input.since, input.cursor), { attempt_count: 1, event_type: 1, url: 1, call_id: 1 })
        .sort({ _id: 1 })
        .limit(input.limit)
        .lean();
      return page.map((d) => ({ id: d._id, attemptCount: d.attempt_count ?? 0, title: { eventType: d.event_type, url: d.url, callId: d.call_id } }));
    },

    async saveRedeliveryProgress(input: { redeliveryId: string; progress: RedeliveryProgress; status: 'running' | 'completed' | 'canceled' }): Promise<void> {
      const { attempted, delivered, failed, skipped } = input.progress;
      await WebhookRedelivery.updateOne(
        { _id: input.redeliveryId },
        { $set: { attempted, delivered, failed, skipped, status: input.status, ...(input.status === 'running' ? {} : { finished_at: now() }) } },
      );
    },
  };
}
