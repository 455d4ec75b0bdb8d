import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * Failed sign-ins of one address (lowercased email), newest last and capped at the allowance,
 * shared by every API process. Old entries are ignored by time, not deleted (no TTL here).
 */
const signInFailureSchema = new Schema(
  {
    _id: { type: String, required: true },
    failures: { type: [{ type: Date }], default: [] },
  },
  { collection: 'sign_in_failures', versionKey: false },
);

export type SignInFailureDocument = InferSchemaType<typeof signInFailureSchema>;
export const SignInFailure = model('SignInFailure', signInFailureSchema);
