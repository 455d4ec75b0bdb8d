import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * Messages of the KYC review workflow (`kyc-<workspace_id>`), shared by the API (starter),
 * the staff scripts (signals, query) and the workflow. Importing this pulls in no workflow
 * code: `defineSignal`/`defineQuery` only build names.
 */

export interface KycPerson {
  id: string | null;
  name: string | null;
}

export interface KycReviewInput {
  workspaceId: string;
  /** Identifies this submission; the record remembers it so that only this run decides it. */
  submissionId: string;
  submittedBy: KycPerson;
  /** The submitter's address, for the audit log. */
  ip: string | null;
}

/** Staff approve: the workspace becomes active. `by` names the staff member. */
export interface ApproveSignal {
  by: string;
}

/** Staff reject: the details become editable again and the owner sees `reason`. */
export interface RejectSignal {
  by: string;
  reason: string;
}

export const approveSignal = defineSignal<[ApproveSignal]>('approve');
export const rejectSignal = defineSignal<[RejectSignal]>('reject');

export type KycReviewStatus = 'submitting' | 'awaiting_review' | 'approving' | 'rejecting' | 'approved' | 'rejected';

export interface KycReviewState {
  workspaceId: string;
  submissionId: string;
  status: KycReviewStatus;
  submittedBy: KycPerson;
  decidedBy: string | null;
  reason: string | null;
  /** ISO, workflow time. */
  decidedAt: string | null;
}

export const stateQuery = defineQuery<KycReviewState>('state');

/** The longest rejection reason kept (also the staff script's limit). */
export const MAX_REJECTION_REASON_LENGTH = 1000;

/** The KYC review workflow's signature, for typed clients that import no workflow code (workflows/kyc.ts implements it). */
export type KycReviewWorkflow = (input: KycReviewInput) => Promise<KycReviewState>;
