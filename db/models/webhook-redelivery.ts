import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * A job retrying every failed delivery of one endpoint since a time (workflow `whr_<id>`, the
 * same id). The workflow writes its progress here after each page, so the API answers
 * progress from MongoDB even while no worker runs.
 */
const webhookRedeliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    endpoint_id: { type: String, required: true },
    since: { type: Date, required: true },
    status: { type: String, enum: ['running', 'completed', 'canceled'], required: true },
    total: { type: Number, default: null },
    attempted: { type: Number, default: 0 },
    delivered: { type: Number, default: 0 },
    failed: { type: Number, default: 0 },
    skipped: { type: Number, default: 0 },
    created_by: { user_id: { type: String, default: null }, name: { type: String, required: true } },
    created_at: { type: Date, required: true },
    finished_at: { type: Date, default: null },
  },
  { collection: 'webhook_redeliveries', versionKey: false },
);

export type WebhookRedeliveryDocument = InferSchemaType<typeof webhookRedeliverySchema> & { _id: string };
export const WebhookRedelivery = model('WebhookRedelivery', webhookRedeliverySchema);
