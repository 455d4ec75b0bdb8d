import { Schema, model, type InferSchemaType } from 'mongoose';

/** A person who signs in. Emails are stored lowercased; the unique index makes sign-up race-free. */
const userSchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    email: { type: String, required: true },
    password_hash: { type: String, required: true },
    two_factor: {
      enabled: { type: Boolean, default: false },
      /** Base32 secret in use once enabled, sealed (contracts/secret-box.ts; older ones plaintext). */
      secret: { type: String, default: null },
      /** Secret handed out by setup, waiting for a first valid code; sealed like `secret`. */
      pending_secret: { type: String, default: null },
      /** Last accepted 30-second step, so a code cannot be used twice. */
      last_step: { type: Number, default: null },
    },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'users', versionKey: false },
);
userSchema.index({ email: 1 }, { unique: true });

export type UserDocument = InferSchemaType<typeof userSchema>;
export const User = model('User', userSchema);
