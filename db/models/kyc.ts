import { Schema, model, type InferSchemaType } from 'mongoose';

export const KYC_STATUSES = ['draft', 'submitted', 'approved', 'rejected'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

/** The statuses in which the owner may change details and documents. */
export const KYC_EDITABLE: readonly KycStatus[] = ['draft', 'rejected'];

const addressSchema = new Schema(
  {
    line1: { type: String, required: true },
    line2: { type: String, default: null },
    city: { type: String, required: true },
    /** ISO 3166-2:IN code without `IN-` (billing splits GST by it). */
    state: { type: String, required: true },
    pin_code: { type: String, required: true },
  },
  { _id: false },
);

const contactSchema = new Schema(
  {
    name: { type: String, required: true },
    email: { type: String, required: true },
    phone: { type: String, required: true },
  },
  { _id: false },
);

const detailsSchema = new Schema(
  {
    legal_name: { type: String, required: true },
    business_type: { type: String, required: true },
    pan: { type: String, required: true },
    gstin: { type: String, default: null },
    address: { type: addressSchema, required: true },
    contact: { type: contactSchema, required: true },
  },
  { _id: false },
);

/**
 * A workspace's business details and review state: one record per workspace, keyed by the
 * workspace id, so every change is one guarded single-document update. `document_ids` is the
 * truth for which uploaded files belong to the details (the bytes live in kyc_documents);
 * `submission_id` ties the record to the review workflow run that owns it, so that a stale
 * run can never decide a later submission.
 */
const kycRecordSchema = new Schema(
  {
    _id: { type: String, required: true },
    status: { type: String, enum: KYC_STATUSES, required: true },
    details: { type: detailsSchema, default: null },
    document_ids: { type: [String], default: [] },
    submission_id: { type: String, default: null },
    submitted_at: { type: Date, default: null },
    submitted_by: { user_id: { type: String, default: null }, name: { type: String, default: null } },
    decided_at: { type: Date, default: null },
    decided_by: { type: String, default: null },
    rejection_reason: { type: String, default: null },
    updated_at: { type: Date, default: null },
  },
  { collection: 'kyc_records', versionKey: false },
);

export type KycRecordDocument = InferSchemaType<typeof kycRecordSchema>;
export const KycRecord = model('KycRecord', kycRecordSchema);

/** One uploaded file, stored in MongoDB (uploads are capped far below the 16 MB document limit). */
const kycDocumentSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    filename: { type: String, required: true },
    /** Recognised from the bytes, never taken from the upload's declared type. */
    content_type: { type: String, required: true },
    size_bytes: { type: Number, required: true },
    sha256: { type: String, required: true },
    /** Removed when the document is erased (its metadata stays): docs/decisions/0211. */
    data: { type: Buffer, required: true },
    uploaded_at: { type: Date, required: true },
    /** When its bytes were erased: the stated period after the decision (0211), or the workspace's closing (0210). */
    erased_at: { type: Date, default: null },
    uploaded_by: { user_id: { type: String, default: null }, name: { type: String, default: null } },
  },
  { collection: 'kyc_documents', versionKey: false },
);
kycDocumentSchema.index({ workspace_id: 1, uploaded_at: 1 });

export type KycDocumentDocument = InferSchemaType<typeof kycDocumentSchema>;
export const KycDocument = model('KycDocument', kycDocumentSchema);
