import type { Client } from '@temporalio/client';
import { enqueueSignal, releaseSignal, slotKeeperId, slotKeeperStartOptions, type EnqueueCall, type ReleaseCall, type SlotKeeperWorkflow } from '../../workflows/shared/slots';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';
import { readCallAgent, type CallAgent } from '../../domain/calls/queue';
import type { Clock } from '../clock';

/** Signal-with-start: the keeper starts on a workspace's first call and keeps running. */
export async function signalKeeper(temporal: Client, workspaceId: string, send: { signal: typeof enqueueSignal; args: [EnqueueCall] } | { signal: typeof releaseSignal; args: [ReleaseCall] }): Promise<void> {
  await temporal.workflow.signalWithStart<SlotKeeperWorkflow, [EnqueueCall] | [ReleaseCall]>('slotKeeperWorkflow', {
    workflowId: slotKeeperId(workspaceId),
    taskQueue: TASK_QUEUES.calls,
    args: [{ workspaceId }],
    signal: send.signal,
    signalArgs: send.args,
    ...slotKeeperStartOptions(workspaceId),
  });
}

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
  };
}
