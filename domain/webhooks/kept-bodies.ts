import { WebhookDelivery } from '../../db/models/webhook-delivery';

/**
 * A delivery that is over keeps the body its call's `data_storage` allows (docs/decisions/0213):
 * the webhook carried the whole event on each attempt of its delivery; what stays is masked or reduced.
 */
export async function keepBodyAfterDelivery(delivery: { _id: string; body_after_delivery?: string | null }): Promise<void> {
  if (delivery.body_after_delivery == null) return;
  await WebhookDelivery.updateOne({ _id: delivery._id }, { $set: { request_body: delivery.body_after_delivery, body_after_delivery: null } });
}
