import { Schema, model, type InferSchemaType } from 'mongoose';

import type { DeliveryStatus } from '../../contracts/webhooks';

export type { DeliveryStatus };
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'retrying', 'delivered', 'failed'];

/**
 * One event to one target. The body is stored as the exact bytes every attempt sends, so
 * retries are byte-identical apart from the signature header. Who the target is, is kept
 * (`endpoint_id` or `agent_id`); its URL and secret are read again at each attempt, so a
 * rotation or an edit applies to retries already waiting. The delivery workflow
 * (`whd_<id>`) is the only writer of `status` after creation, except endpoint deletion,
 * which fails what is still pending or retrying.
 */
const webhookDeliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    target: { type: String, enum: ['endpoint', 'agent'], required: true },
    endpoint_id: { type: String, default: null },
    agent_id: { type: String, default: '' },
    url: { type: String, required: true },
    event_id: { type: String, required: true },
    event_type: { type: String, required: true },
    call_id: { type: String, default: '' },
    request_body: { type: String, required: true },
    /**
     * The body kept once the delivery is over (delivered or failed), in place of `request_body`:
     * masked or reduced by the call's `call.data_storage` (docs/decisions/0213); null: kept as sent.
     */
    body_after_delivery: { type: String, default: null },
    status: { type: String, enum: DELIVERY_STATUSES, required: true },
    /** Ping deliveries are tried once, never retried. */
    retries: { type: Boolean, default: true },
    attempt_count: { type: Number, default: 0 },
    next_attempt_at: { type: Date, default: null },
    last_response: {
      type: new Schema(
        {
          at: Date,
          status_code: Number,
          latency_ms: Number,
          error: { type: String, default: null },
          body_excerpt: { type: String, default: '' },
        },
        { _id: false },
      ),
      default: null,
    },
    failure_reason: { type: String, default: null },
    /** Set when the endpoint is deleted: no attempt may change the delivery after that. */
    target_deleted_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    delivered_at: { type: Date, default: null },
  },
  { collection: 'webhook_deliveries', versionKey: false },
);
webhookDeliverySchema.index({ workspace_id: 1, created_at: -1 });
webhookDeliverySchema.index({ endpoint_id: 1, status: 1 });

export type WebhookDeliveryDocument = InferSchemaType<typeof webhookDeliverySchema> & { _id: string };
export const WebhookDelivery = model('WebhookDelivery', webhookDeliverySchema);
