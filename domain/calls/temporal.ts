import type { Client } from '@temporalio/client';
import type { callWorkflow } from '../../workflows/call';
import { callStartOptions, callWorkflowId, type CallWorkflowInput } from '../../workflows/shared/calls';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';

/**
 * Starts a call's workflow (`call-<call_id>` on `calls`), searchable by workspace, agent and
 * status (queued for a placed outbound call, in-progress for an admitted inbound or browser
 * call) and summarized for the Temporal UI with its numbers and agent.
 */
export async function startCallWorkflow(temporal: Client, input: CallWorkflowInput, agentName: string, status: 'queued' | 'in-progress'): Promise<void> {
  await temporal.workflow.start<typeof callWorkflow>('callWorkflow', {
    taskQueue: TASK_QUEUES.calls,
    workflowId: callWorkflowId(input.callId),
    args: [input],
    ...callStartOptions(input, agentName, status),
  });
}
