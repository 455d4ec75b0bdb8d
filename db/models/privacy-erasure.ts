import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * One erasure of everything about a person in a workspace (`POST /privacy/erasures`,
 * docs/decisions/0209), run by the workflow `privacy-erasure-<id>`, which writes its progress
 * here after each batch. The person's number and email are kept only sealed (envelope
 * encryption, 0196) while the erasure runs, and removed when it completes: the record then
 * shows only a masked number and what was erased.
 */
const privacyErasureSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    status: { type: String, enum: ['running', 'completed'], required: true },
    /** `+91******5670`: enough for the customer to recognise the request. */
    phone_masked: { type: String, required: true },
    email_given: { type: Boolean, default: false },
    /** Sealed `{"phone": ..., "email": ...}` while running (for a repeated request to find it); null once completed. */
    subject_sealed: { type: String, default: null },
    calls_erased: { type: Number, default: 0 },
    calls_waiting: { type: Number, default: 0 },
    contacts_erased: { type: Number, default: 0 },
    events_erased: { type: Number, default: 0 },
    deliveries_erased: { type: Number, default: 0 },
    recordings_erased: { type: Number, default: 0 },
    requested_by: { user_id: { type: String, default: null }, name: { type: String, required: true } },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    completed_at: { type: Date, default: null },
  },
  { collection: 'privacy_erasures', versionKey: false },
);
privacyErasureSchema.index({ workspace_id: 1, created_at: -1 });

export type PrivacyErasureDocument = InferSchemaType<typeof privacyErasureSchema> & { _id: string };
export const PrivacyErasure = model('PrivacyErasure', privacyErasureSchema);
