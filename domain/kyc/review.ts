import { ApplicationFailure } from '@temporalio/common';
import type { KycPerson } from '../../contracts/kyc';
import { recordWorkspaceAudit, type AuditRecord } from '../audit/audit-log';
import { AuditEvent } from '../../db/models/audit-event';
import { KYC_EDITABLE, KycRecord, type KycStatus } from '../../db/models/kyc';

export interface KycDecisionInput {
  workspaceId: string;
  submissionId: string;
  /** The staff member, as named in the signal. */
  by: string;
}

/**
 * Moves the record to `submitted` for this submission. Idempotent: a repeat for the same
 * submission answers the record unchanged. The API calls it right after starting the review
 * workflow (so its answer already shows `submitted`), and the workflow's first activity calls
 * it again, which covers an API that died between the two. A `submitted` record of another
 * submission is taken over: the API starts a new run only when no run is open (conflict
 * policy FAIL), so such a record had lost its workflow. Null when the record is missing or
 * approved.
 */
export async function markKycSubmitted(input: { workspaceId: string; submissionId: string; submittedBy: KycPerson; at: Date }) {
  const mine = await KycRecord.findOne({ _id: input.workspaceId, status: 'submitted', submission_id: input.submissionId }).lean();
  if (mine) return mine;
  return KycRecord.findOneAndUpdate(
    { _id: input.workspaceId, status: { $in: [...KYC_EDITABLE, 'submitted'] } },
    {
      $set: {
        status: 'submitted',
        submission_id: input.submissionId,
        submitted_at: input.at,
        submitted_by: { user_id: input.submittedBy.id, name: input.submittedBy.name },
        decided_at: null,
        decided_by: null,
        rejection_reason: null,
        updated_at: input.at,
      },
    },
    { returnDocument: 'after' },
  ).lean();
}

/** Staff act outside any workspace membership; the audit names them as the signal did. */
export function staff(by: string): AuditRecord['actor'] {
  return { type: 'staff', id: null, name: by };
}

/**
 * Records the decision on this submission's record; a retry after the update applied finds it
 * already decided and answers the same time. Anything else (another submission owns the
 * record) is a bug no retry can fix.
 */
export async function decide(input: KycDecisionInput, status: Extract<KycStatus, 'approved' | 'rejected'>, reason: string | null, now: Date): Promise<Date> {
  const key = { _id: input.workspaceId, submission_id: input.submissionId };
  const record =
    (await KycRecord.findOneAndUpdate(
      { ...key, status: 'submitted' },
      { $set: { status, decided_at: now, decided_by: input.by, rejection_reason: reason, updated_at: now } },
      { returnDocument: 'after' },
    ).lean()) ?? (await KycRecord.findOne({ ...key, status }).lean());
  if (!record?.decided_at) {
    throw ApplicationFailure.nonRetryable(
      `the KYC submission ${input.submissionId} of workspace ${input.workspaceId} is no longer awaiting review`,
      'KycNotSubmitted',
    );
  }
  return record.decided_at;
}

/**
 * The audit log takes a fresh id per event, so a retried activity checks for its submission's
 * event first: one event per submission and action.
 */
export async function auditOnce(workspaceId: string, submissionId: string, record: AuditRecord): Promise<void> {
  const done = await AuditEvent.exists({ workspace_id: workspaceId, action: record.action, 'details.submission_id': submissionId });
  if (done) return;
  await recordWorkspaceAudit(workspaceId, { ...record, details: { ...record.details, submission_id: submissionId } });
}
