import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * One refresh-token family: what a member sees as a connected app (an app connected to one of
 * their workspaces by one consent). Refresh tokens rotate: each use replaces `current_hash`
 * and moves the old hash to `rotated_hashes`, so presenting a rotated token is recognised as
 * reuse and revokes the whole family. Refresh tokens name their family (`vor_<_id><secret>`),
 * so every lookup is by `_id`. Only hashes are stored. `access_tokens` lists the access tokens
 * (`oauth_tokens`) issued in the family that may still be live, so revoking stops them too.
 */
const oauthRefreshTokenSchema = new Schema(
  {
    _id: { type: String, required: true },
    client_id: { type: String, required: true },
    client_name: { type: String, required: true },
    user_id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    resource: { type: String, required: true },
    current_hash: { type: String, required: true },
    current_expires_at: { type: Date, required: true },
    rotated_hashes: { type: [String], default: [] },
    access_tokens: { type: [{ _id: false, id: String, expires_at: Date }], default: [] },
    created_at: { type: Date, required: true },
    refreshed_at: { type: Date, default: null },
    revoked_at: { type: Date, default: null },
    /** Why the family ended: the member revoked it, the app did, or a token was replayed. */
    revoked_reason: { type: String, default: null },
  },
  { collection: 'oauth_refresh_tokens', versionKey: false },
);
oauthRefreshTokenSchema.index({ user_id: 1, created_at: -1 });

export type OAuthRefreshTokenDocument = InferSchemaType<typeof oauthRefreshTokenSchema>;
export const OAuthRefreshToken = model('OAuthRefreshToken', oauthRefreshTokenSchema);
