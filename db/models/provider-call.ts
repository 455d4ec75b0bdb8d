import { Schema, model } from 'mongoose';

/**
 * Which of our calls a telephony provider's call is, keyed by the provider's id (Plivo's
 * `CallUUID`), for inbound calls: the provider's later callbacks of an inbound call (the
 * hang-up URL of its application) name the call only by that id, and a read by `_id` is the
 * one lookup FerretDB answers without decoding the whole collection. Inserted when the
 * answer request arrives, before anything else is written, so that the insert also decides
 * between two answer requests of the same call (the provider's retry): the second finds the
 * first's call and admits nothing twice.
 */
const providerCallSchema = new Schema(
  {
    /** The provider's id of the call. */
    _id: { type: String, required: true },
    call_id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'provider_calls', versionKey: false },
);

export const ProviderCall = model('ProviderCall', providerCallSchema);
