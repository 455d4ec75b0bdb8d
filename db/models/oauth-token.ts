import { Schema, model, type InferSchemaType } from 'mongoose';
import { rateLimitField, requestCountFields } from './rate-window';

/**
 * An access token of a connected app (an MCP client). It acts as the user who connected it,
 * in one workspace, limited to what an API key may do. Only the SHA-256 is stored. Tokens are
 * issued by the MCP server's OAuth flow (`api/auth/oauth-tokens.ts`); each request reads the
 * token and counts itself in it in one update by `_id` (`requestCountFields`, decision 0151).
 */
const oauthTokenSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    user_id: { type: String, required: true },
    client_id: { type: String, required: true },
    client_name: { type: String, required: true },
    token_hash: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    revoked_at: { type: Date, default: null },
    ...rateLimitField,
    ...requestCountFields,
  },
  { collection: 'oauth_tokens', versionKey: false },
);
oauthTokenSchema.index({ token_hash: 1 }, { unique: true });
oauthTokenSchema.index({ user_id: 1, workspace_id: 1 });

export type OAuthTokenDocument = InferSchemaType<typeof oauthTokenSchema>;
export const OAuthToken = model('OAuthToken', oauthTokenSchema);
