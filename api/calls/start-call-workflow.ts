import type { Client } from '@temporalio/client';
import type { callWorkflow } from '../../workflows/call';
import { callSearchAttributes, callWorkflowId, type CallWorkflowInput } from '../../workflows/shared/calls';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';

/**
 * Starts a call's workflow (`call-<call_id>` on `calls`), searchable by workspace, agent and
 * status: queued for a placed outbound call, in-progress for an admitted inbound or browser call.
 */
export async function startCallWorkflow(temporal: Client, input: CallWorkflowInput, status: 'queued' | 'in-progress'): Promise<void> {
  await temporal.workflow.start<typeof callWorkflow>('callWorkflow', {
    taskQueue: TASK_QUEUES.calls,
    workflowId: callWorkflowId(input.callId),
    args: [input],
    typedSearchAttributes: callSearchAttributes(input, status),
  });
}
