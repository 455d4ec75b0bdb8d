import type { ErasurePage, PersonErasureInput } from '../contracts/privacy';
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
  };
}
