import type { Client } from '@temporalio/client';
import { Call } from '../../db/models/call';
import { signalAgentDeleted } from './temporal';

/** Tells every still-queued call of a deleted agent to end with `agent deleted`. */
export async function cancelQueuedCallsOf(temporal: Client, workspaceId: string, agentId: string): Promise<void> {
  const queued = await Call.find({ workspace_id: workspaceId, agent_id: agentId, status: 'queued' }, { _id: 1 }).lean();
  await Promise.all(queued.map((call) => signalAgentDeleted(temporal, call._id)));
}
