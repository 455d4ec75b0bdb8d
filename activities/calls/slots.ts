import type { Client } from '@temporalio/client';
import { callWorkflowsEnded } from '../../domain/calls/temporal';
import { concurrencyLimitOf } from '../../domain/calls/concurrency-limit';

/** What the slot keeper (workflows/slots.ts) reads from MongoDB and Temporal. */
export function createSlotActivities(deps: { temporal?: Client }) {
  return {
    /** Read once when a keeper starts fresh; afterwards the limit changes only by `setLimit`. */
    concurrencyLimitOf: ({ workspaceId }: { workspaceId: string }): Promise<number> => concurrencyLimitOf(workspaceId),

    /** Of the calls holding slots, those whose workflows are no longer running (or never existed). */
    async endedCalls({ callIds }: { callIds: string[] }): Promise<string[]> {
      if (!deps.temporal) throw new Error('endedCalls needs a Temporal client in the worker dependencies');
      return callWorkflowsEnded(deps.temporal, callIds);
    },
  };
}
