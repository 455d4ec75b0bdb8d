import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * A sign-in. The session token (a JWT) names this record; a token is honoured only while the
 * record is neither revoked nor expired, so logout and revocation take effect at once.
 */
const sessionSchema = new Schema(
  {
    _id: { type: String, required: true },
    user_id: { type: String, required: true },
    created_at: { type: Date, required: true },
    last_used_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    revoked_at: { type: Date, default: null },
    ip: { type: String, default: null },
    user_agent: { type: String, default: null },
  },
  { collection: 'sessions', versionKey: false },
);
sessionSchema.index({ user_id: 1, created_at: -1 });

export type SessionDocument = InferSchemaType<typeof sessionSchema>;
export const Session = model('Session', sessionSchema);
