import { WebhookDelivery } from '../../db/models/webhook-delivery';

/**
 * A delivery that is over keeps the body its call's `data_storage` allows (docs/decisions/0213):
 * the webhook carried the whole event on each attempt of its delivery; what stays is masked or reduced.
 */
export async function keepBodyAfterDelivery(delivery: { _id: string; body_after_delivery?: string | null }): Promise<void> {
  if (delivery.body_after_delivery == null) return;
  // A body erased meanwhile (DELETE /calls/{id}, 0208) stays erased.
  const current = await WebhookDelivery.findById(delivery._id, { request_body: 1 }).lean();
  const erased = current ? (JSON.parse(current.request_body) as { data?: { erased?: boolean } }).data?.erased === true : false;
  await WebhookDelivery.updateOne(
    { _id: delivery._id },
    { $set: erased ? { body_after_delivery: null } : { request_body: delivery.body_after_delivery, body_after_delivery: null } },
  );
}
