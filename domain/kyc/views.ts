import { KycDocument, type KycStatus } from '../../db/models/kyc';

/** The stored fields a view reads (lean documents and fresh inserts alike). */
interface KycRecordFields {
  _id: string;
  status: KycStatus;
  details?: {
    legal_name: string;
    business_type: string;
    pan: string;
    gstin?: string | null;
    address: { line1: string; line2?: string | null; city: string; state: string; pin_code: string };
    contact: { name: string; email: string; phone: string };
  } | null;
  document_ids: string[];
  rejection_reason?: string | null;
  submitted_at?: Date | null;
  decided_at?: Date | null;
  updated_at?: Date | null;
}

interface KycDocumentFields {
  _id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  uploaded_at: Date;
  erased_at?: Date | null;
}

export function kycDocumentView(document: KycDocumentFields) {
  return {
    id: document._id,
    filename: document.filename,
    content_type: document.content_type,
    size_bytes: document.size_bytes,
    uploaded_at: document.uploaded_at,
    // Set once the bytes are erased, 90 days after the decision (docs/decisions/0211): the rest stays.
    erased_at: document.erased_at ?? null,
  };
}

/**
 * `GET /kyc` as the owner sees it; a workspace that never saved anything is an empty draft.
 * Documents are those the record lists, oldest first (the bytes are not loaded).
 */
export async function kycView(record: KycRecordFields | null) {
  const documents = record?.document_ids.length
    ? await KycDocument.find({ workspace_id: record._id, _id: { $in: record.document_ids } }, { data: 0 })
        .sort({ uploaded_at: 1, _id: 1 })
        .lean()
    : [];
  const details = record?.details;
  return {
    status: record?.status ?? 'draft',
    details: details
      ? {
          legal_name: details.legal_name,
          business_type: details.business_type,
          pan: details.pan,
          ...(details.gstin ? { gstin: details.gstin } : {}),
          address: {
            line1: details.address.line1,
            ...(details.address.line2 ? { line2: details.address.line2 } : {}),
            city: details.address.city,
            state: details.address.state,
            pin_code: details.address.pin_code,
          },
          contact: { name: details.contact.name, email: details.contact.email, phone: details.contact.phone },
        }
      : null,
    documents: documents.map(kycDocumentView),
    rejection_reason: record?.status === 'rejected' ? (record.rejection_reason ?? null) : null,
    submitted_at: record?.submitted_at ?? null,
    decided_at: record?.decided_at ?? null,
    updated_at: record?.updated_at ?? null,
  };
}
