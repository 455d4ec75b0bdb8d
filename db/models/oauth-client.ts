import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * An OAuth client (an MCP client such as an assistant's desktop app), registered by itself
 * through dynamic client registration (RFC 7591, `POST /oauth/register`). Only public clients:
 * they hold no secret and prove themselves with PKCE, so `_id` (the `client_id`) is not secret.
 */
const oauthClientSchema = new Schema(
  {
    _id: { type: String, required: true },
    client_name: { type: String, required: true },
    /** Exact redirect URIs the authorization endpoint accepts (https, or http on loopback). */
    redirect_uris: { type: [String], required: true },
    grant_types: { type: [String], required: true },
    client_uri: { type: String, default: null },
    logo_uri: { type: String, default: null },
    software_id: { type: String, default: null },
    software_version: { type: String, default: null },
    created_at: { type: Date, required: true },
  },
  { collection: 'oauth_clients', versionKey: false },
);

export type OAuthClientDocument = InferSchemaType<typeof oauthClientSchema>;
export const OAuthClient = model('OAuthClient', oauthClientSchema);
