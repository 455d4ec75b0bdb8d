import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * A telephony callback already taken (docs/decisions/0177): `_id` is its
 * `X-Plivo-Signature-V3-Nonce` and the signature that matched, so that a second request with
 * both is refused as a replay, on whichever API node it lands. `expires_at` ends the window in
 * which it is refused; expired entries are deleted explicitly (FerretDB v1 has no TTL index)
 * and, until then, taken over by a request that carries them again.
 */
const callbackNonceSchema = new Schema(
  {
    _id: { type: String, required: true },
    expires_at: { type: Date, required: true },
  },
  { collection: 'callback_nonces', versionKey: false },
);
// The sweep's range (MongoDB; FerretDB v1 scans, which the window keeps small).
callbackNonceSchema.index({ expires_at: 1 });

export type CallbackNonceDocument = InferSchemaType<typeof callbackNonceSchema>;
export const CallbackNonce = model('CallbackNonce', callbackNonceSchema);

/** The key of one signed callback: nonce and signature (a nonce Plivo might reuse on another request signs differently). */
export function callbackNonceId(nonce: string, signature: string): string {
  return `${nonce} ${signature}`;
}
