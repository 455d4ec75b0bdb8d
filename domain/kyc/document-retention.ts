import { KycDocument, KycRecord } from '../../db/models/kyc';

/**
 * KYC documents are kept only as long as stated after the decision on them (docs/decisions/0211):
 * then their bytes go; what they were (file name, type, size, checksum, upload and erasure
 * times) stays, as does the decision on the record.
 */

/** Erases the bytes of the workspace's documents matching `filter` not yet erased; answers how many. Safe to run again. */
export async function eraseKycDocumentBytes(workspaceId: string, filter: Record<string, unknown>, at: Date): Promise<number> {
  const result = await KycDocument.updateMany({ workspace_id: workspaceId, erased_at: null, ...filter }, { $unset: { data: 1 }, $set: { erased_at: at } });
  return result.modifiedCount;
}

/**
 * The end of a decided submission's retention: the bytes of the documents uploaded up to its
 * decision. Nothing when a later submission has taken the record over (after a rejection): its
 * documents may be the same ones, kept under review and then for the period after its own
 * decision, whose own timer erases them. Documents uploaded after the decision (a rejected
 * workspace preparing the next submission) are not this submission's.
 */
export async function eraseDecidedKycDocuments(input: { workspaceId: string; submissionId: string; decidedAt: Date }, at: Date): Promise<number> {
  const record = await KycRecord.findById(input.workspaceId, { submission_id: 1 }).lean();
  if (!record || record.submission_id !== input.submissionId) return 0;
  return eraseKycDocumentBytes(input.workspaceId, { uploaded_at: { $lte: input.decidedAt } }, at);
}
