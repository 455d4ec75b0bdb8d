import { Schema, model } from 'mongoose';

/**
 * The workspace's default signing secret (one document per workspace, `_id` = workspace id),
 * used for deliveries to agents' `webhook_url`. Created on first use by insert, so two
 * first uses agree on one secret. `secret` is sealed (contracts/secret-box.ts, 0196).
 */
const webhookDefaultSecretSchema = new Schema(
  {
    _id: { type: String, required: true },
    secret: { type: String, required: true },
    secret_hint: { type: String, required: true },
    created_at: { type: Date, required: true },
    rotated_at: { type: Date, default: null },
  },
  { collection: 'webhook_default_secrets', versionKey: false },
);

export const WebhookDefaultSecret = model('WebhookDefaultSecret', webhookDefaultSecretSchema);
