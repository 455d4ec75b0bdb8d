import { ApplicationFailure } from '@temporalio/common';
import { Workspace } from '../../db/models/workspace';
import { planOf } from '../billing/plans';

/**
 * A workspace's limit on concurrent calls: the one staff set (`concurrency_limit`), else its
 * plan's. A workspace that does not exist has no calls to limit: that failure is final.
 */
export async function concurrencyLimitOf(workspaceId: string): Promise<number> {
  const workspace = await Workspace.findById(workspaceId, { plan: 1, concurrency_limit: 1 }).lean();
  if (!workspace) throw ApplicationFailure.nonRetryable(`workspace ${workspaceId} does not exist`, 'WorkspaceNotFound');
  return workspace.concurrency_limit ?? planOf(workspace.plan).concurrentCalls;
}
