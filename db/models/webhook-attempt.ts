import { Schema, model, type InferSchemaType } from 'mongoose';

import type { AttemptTrigger } from '../../contracts/webhooks';

export const ATTEMPT_TRIGGERS: readonly AttemptTrigger[] = ['automatic', 'manual', 'test'];

/**
 * One HTTP attempt of a delivery. `_id` is `<delivery id>:<workflow run id>:<n>`, fixed by the
 * workflow before the activity runs, so an activity retried after its POST records the same
 * attempt again instead of a second one. Kept apart from the delivery document because
 * FerretDB applies concurrent array pushes as read-modify-write.
 */
const webhookAttemptSchema = new Schema(
  {
    _id: { type: String, required: true },
    delivery_id: { type: String, required: true },
    trigger: { type: String, enum: ATTEMPT_TRIGGERS, required: true },
    at: { type: Date, required: true },
    status_code: { type: Number, default: null },
    latency_ms: { type: Number, required: true },
    error: { type: String, default: null },
    response_excerpt: { type: String, default: '' },
    /** The signature's `t`, so support can match a receiver's complaint to an attempt. */
    signed_at: { type: Number, default: null },
  },
  { collection: 'webhook_attempts', versionKey: false },
);
webhookAttemptSchema.index({ delivery_id: 1, at: 1 });

export type WebhookAttemptDocument = InferSchemaType<typeof webhookAttemptSchema> & { _id: string };
export const WebhookAttempt = model('WebhookAttempt', webhookAttemptSchema);
