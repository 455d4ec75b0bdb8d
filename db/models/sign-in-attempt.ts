import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * One of the 5 sign-in attempts an address may have in flight or failed within 5 minutes.
 * `_id` is `<address>#<slot>` (slot 0 to 4): claiming a slot is an insert, which the unique
 * `_id` makes atomic on MongoDB and FerretDB alike, so concurrent attempts cannot exceed the
 * allowance. A slot older than the window is free to take again.
 */
const signInAttemptSchema = new Schema(
  {
    _id: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'sign_in_attempts', versionKey: false },
);

export type SignInAttemptDocument = InferSchemaType<typeof signInAttemptSchema>;
export const SignInAttempt = model('SignInAttempt', signInAttemptSchema);
