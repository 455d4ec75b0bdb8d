import { Schema, model, type InferSchemaType } from 'mongoose';
import { rateLimitField, requestCountFields } from './rate-window';

/**
 * A workspace API key. Only the SHA-256 of the key is stored; `prefix` is what lists show.
 * Each request with the key reads it and counts itself in it in one update by `_id`
 * (`counts`, `last_used_at`: `requestCountFields`, decision 0151).
 */
const apiKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    name: { type: String, required: true },
    prefix: { type: String, required: true },
    key_hash: { type: String, required: true },
    created_by: { user_id: { type: String, default: null }, name: { type: String, required: true } },
    created_at: { type: Date, required: true },
    revoked_at: { type: Date, default: null },
    ...rateLimitField,
    ...requestCountFields,
  },
  { collection: 'api_keys', versionKey: false },
);
apiKeySchema.index({ key_hash: 1 }, { unique: true });
apiKeySchema.index({ workspace_id: 1, created_at: -1 });

export type ApiKeyDocument = InferSchemaType<typeof apiKeySchema>;
export const ApiKey = model('ApiKey', apiKeySchema);
