import type { Client } from '@temporalio/client';
import { enqueueSignal, releaseSignal, type EnqueueCall, type ReleaseCall } from '../../contracts/slots';
import { signalKeeper } from '../../domain/calls/temporal';
import { readCallAgent, type CallAgent } from '../../domain/calls/queue';
import { MEDIA_NODE_ALIVE_FOR_RESTART_MS, mediaNodeSeenSince } from '../../domain/calls/media-nodes';
import type { Clock } from '../clock';

export function createCallQueueActivities(deps: { clock: Clock; temporal?: Client }) {
  const temporal = () => {
    if (!deps.temporal) throw new Error('the call activities need a Temporal client in the worker dependencies');
    return deps.temporal;
  };
  const signalKeeperOf = (workspaceId: string, send: Parameters<typeof signalKeeper>[2]) => signalKeeper(temporal(), workspaceId, send);

  return {
    loadCallAgent: (input: { workspaceId: string; agentId: string }): Promise<CallAgent | null> => readCallAgent(input.workspaceId, input.agentId),

    async enqueueCall(input: { workspaceId: string } & EnqueueCall): Promise<void> {
      await signalKeeperOf(input.workspaceId, { signal: enqueueSignal, args: [{ callId: input.callId, queuedAt: input.queuedAt }] });
    },

    async releaseSlot(input: { workspaceId: string } & ReleaseCall): Promise<void> {
      await signalKeeperOf(input.workspaceId, { signal: releaseSignal, args: [{ callId: input.callId }] });
    },

    /** Whether a call's chosen media node still beats in the directory: its conversation that never ran there may start again (0241). */
    mediaNodeAlive: (input: { taskQueue: string }): Promise<boolean> =>
      mediaNodeSeenSince(input.taskQueue, new Date(deps.clock.now().getTime() - MEDIA_NODE_ALIVE_FOR_RESTART_MS)),
  };
}
