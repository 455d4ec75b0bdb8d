import { Schema, model, type InferSchemaType } from 'mongoose';

/** How the caller of a logged request proved who it was. `none`: no valid credential (401s, public endpoints). */
export const LOG_CREDENTIAL_KINDS = ['api_key', 'oauth', 'session', 'none'] as const;
export type LogCredentialKind = (typeof LOG_CREDENTIAL_KINDS)[number];

/**
 * One API request as the server saw it: who (credential, never a secret), in which workspace,
 * what (method, path), the outcome and how long it took. Written in batches by the log
 * recorder (api/observability/log-recorder.ts), never on the request's own path; read by
 * `GET /logs`. Entries without a workspace (sign-in, a bad key) are kept for operators only.
 */
const serverLogSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, default: null },
    at: { type: Date, required: true },
    source: { type: String, required: true },
    method: { type: String, required: true },
    /** Relative to the API base (`/calls/…`), as the contract writes paths; no query string. */
    path: { type: String, required: true },
    status: { type: Number, required: true },
    duration_ms: { type: Number, required: true },
    request_id: { type: String, required: true },
    credential: {
      kind: { type: String, enum: LOG_CREDENTIAL_KINDS, required: true },
      /** The API key's or app token's id, or the signed-in user's id. */
      id: { type: String, default: null },
      /** The key's or token's shown prefix (`vak_` + 8 characters), as key lists show it. */
      prefix: { type: String, default: null },
      /** The key's name, the user's name, or `<user> via <app>`. */
      name: { type: String, default: null },
    },
  },
  { collection: 'server_logs', versionKey: false },
);
serverLogSchema.index({ workspace_id: 1, at: -1 });
serverLogSchema.index({ at: 1 });

export type ServerLogDocument = InferSchemaType<typeof serverLogSchema> & { _id: string };
export const ServerLog = model('ServerLog', serverLogSchema);
