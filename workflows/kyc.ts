import { condition, log, ParentClosePolicy, patched, proxyActivities, setCurrentDetails, setHandler, startChild } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { kycDocumentRetentionWorkflowId } from '../contracts/privacy';
import { Kind, WorkspaceId } from '../contracts/search-attributes';
import { approveSignal, MAX_REJECTION_REASON_LENGTH, rejectSignal, stateQuery, type KycReviewInput, type KycReviewState } from '../contracts/kyc';

const { markKycSubmitted, approveKyc, rejectKyc } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' }, // MongoDB may be down for a while: retry until it is back
});

type Decision = { kind: 'approve'; by: string } | { kind: 'reject'; by: string; reason: string };

/**
 * One review of a workspace's business details (`kyc-<workspace_id>`): marks the details
 * submitted, waits, as long as it takes, for staff to signal `approve` or `reject`, then
 * applies the decision (approval activates the workspace). The first valid decision wins;
 * later or malformed signals are logged and ignored, since a signal cannot answer an error.
 * A resubmission after a rejection is a new run under the same id.
 */
export async function kycReviewWorkflow(input: KycReviewInput): Promise<KycReviewState> {
  const state: KycReviewState = {
    workspaceId: input.workspaceId,
    submissionId: input.submissionId,
    status: 'submitting',
    submittedBy: input.submittedBy,
    decidedBy: null,
    reason: null,
    decidedAt: null,
  };
  let decision: Decision | undefined;
  setHandler(stateQuery, () => state);
  setHandler(approveSignal, (signal) => {
    const by = staffName(signal?.by);
    if (!by) return log.warn('approve signal ignored: it needs {"by": "<staff name>"}', { signal });
    if (decision) return log.warn('approve signal ignored: already decided', { decision: decision.kind, by });
    decision = { kind: 'approve', by };
  });
  setHandler(rejectSignal, (signal) => {
    const by = staffName(signal?.by);
    const reason = typeof signal?.reason === 'string' ? signal.reason.trim().slice(0, MAX_REJECTION_REASON_LENGTH) : '';
    if (!by || !reason) return log.warn('reject signal ignored: it needs {"by": "<staff name>", "reason": "<why>"}', { signal });
    if (decision) return log.warn('reject signal ignored: already decided', { decision: decision.kind, by });
    decision = { kind: 'reject', by, reason };
  });

  setCurrentDetails(`marking the business details of workspace ${input.workspaceId} submitted`);
  await markKycSubmitted(input);
  state.status = 'awaiting_review';
  setCurrentDetails('awaiting review: signal `approve` {by} or `reject` {by, reason}');
  log.info('KYC awaiting review', { workspaceId: input.workspaceId, submissionId: input.submissionId });

  await condition(() => decision !== undefined);
  const decided = decision as Decision;
  state.decidedBy = decided.by;
  let applied: { decidedAt: string; documentsEraseAt?: string };
  if (decided.kind === 'approve') {
    state.status = 'approving';
    setCurrentDetails(`approved by ${decided.by}: activating the workspace`);
    applied = await approveKyc({ workspaceId: input.workspaceId, submissionId: input.submissionId, by: decided.by });
    state.decidedAt = applied.decidedAt;
    state.status = 'approved';
  } else {
    state.status = 'rejecting';
    state.reason = decided.reason;
    setCurrentDetails(`rejected by ${decided.by}: ${decided.reason}`);
    applied = await rejectKyc({ workspaceId: input.workspaceId, submissionId: input.submissionId, by: decided.by, reason: decided.reason });
    state.decidedAt = applied.decidedAt;
    state.status = 'rejected';
  }
  // The documents are kept only the stated period after the decision (docs/decisions/0211): a
  // timer of their own, so this review still ends here. Runs recorded before it started none.
  if (patched('kyc-document-retention') && applied.documentsEraseAt) {
    setCurrentDetails(`${state.status}: keeping the documents until ${applied.documentsEraseAt}`);
    await startChild('kycDocumentRetentionWorkflow', {
      workflowId: kycDocumentRetentionWorkflowId(input.submissionId),
      args: [{ workspaceId: input.workspaceId, submissionId: input.submissionId, decidedAt: applied.decidedAt, eraseAt: applied.documentsEraseAt }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        { key: WorkspaceId, value: input.workspaceId },
        { key: Kind, value: 'kyc-documents' },
      ],
      staticSummary: `KYC documents of workspace ${input.workspaceId} (submission ${input.submissionId}), erased at ${applied.documentsEraseAt}`,
    });
  }
  setCurrentDetails(`${state.status} by ${decided.by}`);
  log.info(`KYC ${state.status}`, { workspaceId: input.workspaceId, by: decided.by });
  return state;
}

/** Signals come from people typing JSON on a command line: accept only a non-empty name. */
function staffName(by: unknown): string | null {
  return typeof by === 'string' && by.trim() ? by.trim().slice(0, 200) : null;
}
