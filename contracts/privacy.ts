/**
 * Messages of the erasure workflows (docs/decisions/0209), shared by the API (starter), the
 * activities and the workflows. Importing this pulls in no workflow code.
 */

/** Whom an erasure by person is about. Carried in the workflow's input: encrypted by the payload codec (0200). */
export interface ErasureSubject {
  phone: string;
  email: string | null;
}

export interface PersonErasureInput {
  erasureId: string;
  workspaceId: string;
  subject: ErasureSubject;
}

/** Records looked at per activity: a page of the workspace's calls or batch contacts, by id order. */
export const ERASURE_PAGE_SIZE = 100;

/** One page's outcome: `nextAfter` null when the collection is done; `waiting` records (live calls, contacts still to be dialled) are passed again later. */
export interface ErasurePage {
  nextAfter: string | null;
  calls: number;
  contacts: number;
  events: number;
  deliveries: number;
  recordings: number;
  waiting: string[];
}

/** Between passes over records still live or waiting to be called. */
export const WAITING_PASS_INTERVAL = '5 minutes';
/** Passes at most: a queued call waits at most 24 hours, a call lasts at most an hour. */
export const MAX_WAITING_PASSES = 300;

export const personErasureWorkflowId = (erasureId: string) => `privacy-erasure-${erasureId}`;

/**
 * Closing a workspace (docs/decisions/0210): the workflow `workspace-closure-<closure id>`
 * waits until `eraseAt` (the grace period, cancellable), then erases the workspace's data.
 */
export interface WorkspaceClosureInput {
  closureId: string;
  workspaceId: string;
  /** ISO: when the grace period ends (the API computed it from the stated period). */
  eraseAt: string;
}

/** What a closure erases, in this order; each step pages (or is one idempotent pass) and may run again. */
export const WORKSPACE_ERASURE_STEPS = ['calls', 'contacts', 'deliveries', 'knowledge', 'kyc', 'do_not_call', 'access'] as const;
export type WorkspaceErasureStep = (typeof WORKSPACE_ERASURE_STEPS)[number];

/** One step's page: `nextAfter` null when the step is done; `waiting` records still live. */
export interface WorkspaceErasurePage {
  nextAfter: string | null;
  erased: number;
  waiting: number;
}

export const workspaceClosureWorkflowId = (closureId: string) => `workspace-closure-${closureId}`;
/** Signal name: the owner cancelled the closure (the API has already recorded it; the workflow then ends). */
export const WORKSPACE_CLOSURE_CANCEL_SIGNAL = 'cancel';

/**
 * The bytes of a KYC submission's documents, erased when the stated period after its decision
 * has passed (docs/decisions/0211): the workflow `kyc-documents-<submission id>`.
 */
export interface KycDocumentRetentionInput {
  workspaceId: string;
  submissionId: string;
  /** ISO: the decision's time; documents uploaded up to it belong to the decided submission. */
  decidedAt: string;
  /** ISO: when their bytes are erased. */
  eraseAt: string;
}

export const kycDocumentRetentionWorkflowId = (submissionId: string) => `kyc-documents-${submissionId}`;

/**
 * The stated periods (docs/callers-data.md): 30 days' grace before a closed workspace is erased
 * (0210), KYC documents' bytes kept 90 days after the decision (0211). Tests shorten them only
 * through WORKSPACE_CLOSURE_GRACE_SECONDS and KYC_DOCUMENT_RETENTION_SECONDS (config/env.ts).
 */
export const DEFAULT_PRIVACY_PERIODS = { workspaceClosureGraceSeconds: 30 * 86_400, kycDocumentRetentionSeconds: 90 * 86_400 } as const;
