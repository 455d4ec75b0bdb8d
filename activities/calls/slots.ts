import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { callWorkflowId } from '../../workflows/shared/calls';
import { Workspace } from '../../db/models/workspace';
import { planOf } from '../../domain/billing/plans';

/**
 * A workspace's limit on concurrent calls: the one staff set (`concurrency_limit`), else its
 * plan's. A workspace that does not exist has no calls to limit: that failure is final.
 */
export async function concurrencyLimitOf(workspaceId: string): Promise<number> {
  const workspace = await Workspace.findById(workspaceId, { plan: 1, concurrency_limit: 1 }).lean();
  if (!workspace) throw ApplicationFailure.nonRetryable(`workspace ${workspaceId} does not exist`, 'WorkspaceNotFound');
  return workspace.concurrency_limit ?? planOf(workspace.plan).concurrentCalls;
}

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
