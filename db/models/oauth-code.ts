import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * An authorization code, issued when a member approves a connected app on the consent page.
 * `_id` is the code's SHA-256 (the code itself is never stored), so the token endpoint reads
 * it by id. It is single-use and short-lived; `grant_id` names, from the start, the refresh
 * token family its exchange creates, so that a replayed code can revoke what it produced.
 */
const oauthCodeSchema = new Schema(
  {
    _id: { type: String, required: true },
    client_id: { type: String, required: true },
    redirect_uri: { type: String, required: true },
    /** PKCE S256 challenge: base64url(SHA-256(code_verifier)). */
    code_challenge: { type: String, required: true },
    user_id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    /** The resource (RFC 8707) the tokens are for: the service's origin or its MCP endpoint. */
    resource: { type: String, required: true },
    grant_id: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    used_at: { type: Date, default: null },
  },
  { collection: 'oauth_codes', versionKey: false },
);

export type OAuthCodeDocument = InferSchemaType<typeof oauthCodeSchema>;
export const OAuthCode = model('OAuthCode', oauthCodeSchema);
