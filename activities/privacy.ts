import type {
  ErasurePage,
  KycDocumentRetentionInput,
  PersonErasureInput,
  WorkspaceClosureInput,
  WorkspaceErasurePage,
  WorkspaceErasureStep,
} from '../contracts/privacy';
import { eraseDecidedKycDocuments } from '../domain/kyc/document-retention';
import { beginWorkspaceErasure, completeWorkspaceErasure, eraseWorkspacePage } from '../domain/privacy/workspace-closure';
import { completePersonErasure } from '../domain/privacy/erasures';
import { erasePersonCallsPage, erasePersonContactsPage, recordErasureProgress } from '../domain/privacy/person-erasure';
import type { Client } from '@temporalio/client';
import type { Clock } from './clock';

/**
 * The steps of an erasure by person (docs/decisions/0209): one page of calls or batch contacts
 * each, then the completion. Each is safe to run again.
 */
/** What erasure's activities need: the clock, and a Temporal client for the webhook it sends at the end. */
export function createPrivacyActivities(deps: { clock: Clock; temporal?: Client }) {
  return {
    async erasePersonPage(input: PersonErasureInput & { collection: 'calls' | 'contacts'; after: string | null }): Promise<ErasurePage> {
      const at = deps.clock.now();
      const page =
        input.collection === 'calls'
          ? await erasePersonCallsPage(input.workspaceId, input.subject, input.after, at)
          : await erasePersonContactsPage(input.workspaceId, input.subject, input.after, at);
      await recordErasureProgress(input.erasureId, page, at);
      return page;
    },

    /** Marks the erasure completed (the sealed subject removed), audits it and sends `privacy.erasure.completed`. */
    async completePersonErasure(input: { erasureId: string; workspaceId: string; waiting: number }): Promise<void> {
      if (!deps.temporal) throw new Error('completePersonErasure needs a Temporal client in the worker dependencies (it sends a webhook)');
      await completePersonErasure(input.erasureId, input.waiting, { temporal: deps.temporal, now: () => deps.clock.now() });
    },

    /** The grace period is over: true when the closure is now erasing, false when the owner cancelled it (docs/decisions/0210). */
    async beginWorkspaceErasure(input: WorkspaceClosureInput): Promise<boolean> {
      return beginWorkspaceErasure(input.workspaceId, input.closureId, deps.clock.now());
    },

    /** One page of one step of a closed workspace's erasure. */
    async eraseWorkspacePage(input: WorkspaceClosureInput & { step: WorkspaceErasureStep; after: string | null }): Promise<WorkspaceErasurePage> {
      return eraseWorkspacePage(input.workspaceId, input.step, input.after, deps.clock.now());
    },

    /** Marks the closure erased and audits what was erased. */
    async completeWorkspaceErasure(input: WorkspaceClosureInput & { erased: Record<WorkspaceErasureStep, number>; waiting: number }): Promise<void> {
      await completeWorkspaceErasure(input.workspaceId, input.closureId, input.erased, input.waiting, deps.clock.now());
    },

    /** The stated period after a KYC decision is over: the decided submission's documents lose their bytes (docs/decisions/0211). */
    async eraseDecidedKycDocuments(input: KycDocumentRetentionInput): Promise<number> {
      return eraseDecidedKycDocuments(
        { workspaceId: input.workspaceId, submissionId: input.submissionId, decidedAt: new Date(input.decidedAt) },
        deps.clock.now(),
      );
    },
  };
}
