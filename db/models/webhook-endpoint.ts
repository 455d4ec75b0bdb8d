import { Schema, model, type InferSchemaType } from 'mongoose';

/** The most endpoints a workspace may have (contract, "Limits"). */
export const MAX_WEBHOOK_ENDPOINTS = 20;

/**
 * A workspace webhook endpoint. The secret is kept whole because every attempt signs with it
 * (HMAC needs the key itself), sealed (contracts/secret-box.ts, docs/decisions/0196; one
 * stored before encryption reads as plaintext); only `secret_hint` ever leaves the API after
 * create and rotate.
 *
 * `slot` (0 to 19, unique per workspace) makes the limit exact under concurrent creates:
 * each create claims a free slot by insert, and a unique index lets only one of two racing
 * creates have it. Deleting the endpoint frees its slot.
 */
const webhookEndpointSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    slot: { type: Number, required: true },
    url: { type: String, required: true },
    description: { type: String, default: '' },
    events: { type: [String], required: true },
    active: { type: Boolean, required: true },
    secret: { type: String, required: true },
    secret_hint: { type: String, required: true },
    created_by: { user_id: { type: String, default: null }, name: { type: String, required: true } },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    secret_rotated_at: { type: Date, default: null },
  },
  { collection: 'webhook_endpoints', versionKey: false },
);
webhookEndpointSchema.index({ workspace_id: 1, slot: 1 }, { unique: true });
webhookEndpointSchema.index({ workspace_id: 1, created_at: -1 });

export type WebhookEndpointDocument = InferSchemaType<typeof webhookEndpointSchema> & { _id: string };
export const WebhookEndpoint = model('WebhookEndpoint', webhookEndpointSchema);
