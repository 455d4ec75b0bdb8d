import { ApplicationFailure } from '@temporalio/common';
import type { KycReviewInput } from '../contracts/kyc';
import { Workspace } from '../db/models/workspace';
import { auditOnce, decide, markKycSubmitted, staff, type KycDecisionInput } from '../domain/kyc/review';
import type { Clock } from './clock';
import { DEFAULT_PRIVACY_PERIODS } from '../contracts/privacy';

/** The review's steps that touch MongoDB; each is safe to retry. */
export function createKycActivities({ clock, kycDocumentRetentionSeconds }: { clock: Clock; kycDocumentRetentionSeconds?: number }) {
  // When the decided submission's documents lose their bytes (docs/decisions/0211).
  const documentsEraseAt = (decidedAt: Date) =>
    new Date(decidedAt.getTime() + (kycDocumentRetentionSeconds ?? DEFAULT_PRIVACY_PERIODS.kycDocumentRetentionSeconds) * 1000).toISOString();
  return {
    async markKycSubmitted(input: KycReviewInput): Promise<void> {
      const record = await markKycSubmitted({ ...input, at: clock.now() });
      if (!record) {
        throw ApplicationFailure.nonRetryable(`the KYC details of workspace ${input.workspaceId} are missing or already approved`, 'KycNotSubmittable');
      }
      await auditOnce(input.workspaceId, input.submissionId, {
        action: 'kyc.submitted',
        actor: { type: 'user', id: input.submittedBy.id, name: input.submittedBy.name },
        target: { type: 'workspace', id: input.workspaceId },
        at: record.submitted_at ?? clock.now(),
        ip: input.ip,
      });
    },

    /** Approves the submission and activates the workspace. Answers when it was decided and when its documents are erased (ISO). */
    async approveKyc(input: KycDecisionInput): Promise<{ decidedAt: string; documentsEraseAt: string }> {
      const decidedAt = await decide(input, 'approved', null, clock.now());
      await Workspace.updateOne(
        { _id: input.workspaceId, status: 'onboarding' },
        { $set: { status: 'active', activated_at: decidedAt, updated_at: decidedAt } },
      );
      await auditOnce(input.workspaceId, input.submissionId, {
        action: 'kyc.approved',
        actor: staff(input.by),
        target: { type: 'workspace', id: input.workspaceId },
        at: decidedAt,
      });
      return { decidedAt: decidedAt.toISOString(), documentsEraseAt: documentsEraseAt(decidedAt) };
    },

    /** Rejects the submission: the details become editable again and show the reason. */
    async rejectKyc(input: KycDecisionInput & { reason: string }): Promise<{ decidedAt: string; documentsEraseAt: string }> {
      const decidedAt = await decide(input, 'rejected', input.reason, clock.now());
      await auditOnce(input.workspaceId, input.submissionId, {
        action: 'kyc.rejected',
        actor: staff(input.by),
        target: { type: 'workspace', id: input.workspaceId },
        at: decidedAt,
        details: { reason: input.reason },
      });
      return { decidedAt: decidedAt.toISOString(), documentsEraseAt: documentsEraseAt(decidedAt) };
    },
  };
}
