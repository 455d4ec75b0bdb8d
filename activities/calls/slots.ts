import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { callWorkflowId } from '../../workflows/shared/calls';
import { concurrencyLimitOf } from '../../domain/calls/concurrency-limit';

/** What the slot keeper (workflows/slots.ts) reads from MongoDB and Temporal. */
export function createSlotActivities(deps: { temporal?: Client }) {
  return {
    /** Read once when a keeper starts fresh; afterwards the limit changes only by `setLimit`. */
    concurrencyLimitOf: ({ workspaceId }: { workspaceId: string }): Promise<number> => concurrencyLimitOf(workspaceId),

    /** Of the calls holding slots, those whose workflows are no longer running (or never existed). */
    async endedCalls({ callIds }: { callIds: string[] }): Promise<string[]> {
      const temporal = deps.temporal;
      if (!temporal) throw new Error('endedCalls needs a Temporal client in the worker dependencies');
      const ended = await Promise.all(
        callIds.map(async (callId) => {
          try {
            const { status } = await temporal.workflow.getHandle(callWorkflowId(callId)).describe();
            return status.name === 'RUNNING' ? null : callId;
          } catch (error) {
            if (error instanceof WorkflowNotFoundError) return callId;
            throw error;
          }
        }),
      );
      return ended.filter((id): id is string => id !== null);
    },
  };
}
