import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { newId } from '../../activities/db/ids';
import { Call, type CallStatus } from '../../activities/db/models/call';
import { balanceOf } from '../../activities/ledger';
import type { callWorkflow } from '../../workflows/call';
import { callWorkflowId, type CallWorkflowInput } from '../../workflows/shared/calls';
import { releaseSignal, slotKeeperId, tryAcquireUpdate } from '../../workflows/shared/slots';
import { AgentId, CallStatus as CallStatusAttribute, Kind, WorkspaceId } from '../../workflows/shared/search-attributes';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';
import type { slotKeeperWorkflow } from '../../workflows/slots';

export interface LiveCallRequest {
  workspaceId: string;
  agent: { _id: string; name: string; status: string };
  channel: 'inbound' | 'browser';
  /** E.164 for phone calls; for browser calls, the agent's number or empty. */
  toNumber: string;
  fromNumber: string;
  userData: Record<string, unknown>;
  /** Who started it: the caller's number (inbound) or the person's name (browser). */
  placedBy: string;
  providerCallId?: string;
}

/** Why a live call was not admitted; the same words go in the refused call's `hangup_reason`. */
export type LiveCallRefusal = 'agent paused' | 'out of credits' | 'concurrency limit reached';

export type LiveCallAdmission = { admitted: true; callId: string } | { admitted: false; callId: string; reason: LiveCallRefusal };

/**
 * Admits an inbound or browser call, which cannot wait in a queue: the agent must be active,
 * the balance above zero (billing rule 3), and a concurrency slot free at once (the slot
 * keeper's `tryAcquire`, starting the keeper if this is the workspace's first call). An
 * admitted call gets its record (`in-progress`) and its workflow, which begins at
 * `call.started` and gives the slot back when the call ends. A refused call is recorded as
 * `failed` with the reason, so that it shows in the call list.
 */
export async function admitLiveCall(temporal: Client, now: () => Date, request: LiveCallRequest): Promise<LiveCallAdmission> {
  const at = now();
  const callId = newId();
  const record = {
    _id: callId,
    workspace_id: request.workspaceId,
    agent_id: request.agent._id,
    agent_name: request.agent.name,
    direction: request.channel,
    to_number: request.toNumber,
    from_number: request.fromNumber,
    user_data: request.userData,
    placed_by: request.placedBy,
    provider_call_id: request.providerCallId ?? null,
    created_at: at,
    updated_at: at,
  };
  const refuse = async (reason: LiveCallRefusal): Promise<LiveCallAdmission> => {
    await Call.create({ ...record, status: 'failed' as CallStatus, ended_at: at, hangup_by: 'system', hangup_reason: reason });
    return { admitted: false, callId, reason };
  };
  if (request.agent.status !== 'active') return refuse('agent paused');
  if ((await balanceOf(request.workspaceId)) <= 0) return refuse('out of credits');

  const slot = await temporal.workflow.executeUpdateWithStart(tryAcquireUpdate, {
    args: [{ callId, channel: request.channel }],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof slotKeeperWorkflow>('slotKeeperWorkflow', {
      workflowId: slotKeeperId(request.workspaceId),
      taskQueue: TASK_QUEUES.calls,
      args: [{ workspaceId: request.workspaceId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [
        { key: WorkspaceId, value: request.workspaceId },
        { key: Kind, value: 'slot_keeper' },
      ],
    }),
  });
  if (!slot.granted) return refuse('concurrency limit reached');

  try {
    await Call.create({ ...record, status: 'in-progress' as CallStatus, started_at: at });
    const input: CallWorkflowInput = {
      callId,
      workspaceId: request.workspaceId,
      agentId: request.agent._id,
      direction: request.channel,
      queuedAt: at.toISOString(),
      placedBy: request.placedBy,
      toNumber: request.toNumber,
      fromNumber: request.fromNumber,
      valueKeys: Object.keys(request.userData),
      providerCallId: request.providerCallId,
    };
    await temporal.workflow.start<typeof callWorkflow>('callWorkflow', {
      taskQueue: TASK_QUEUES.calls,
      workflowId: callWorkflowId(callId),
      args: [input],
      typedSearchAttributes: [
        { key: WorkspaceId, value: request.workspaceId },
        { key: AgentId, value: request.agent._id },
        { key: CallStatusAttribute, value: 'in-progress' },
        { key: Kind, value: 'call' },
      ],
    });
  } catch (error) {
    // No workflow will give the slot back: do it here.
    await temporal.workflow.getHandle(slotKeeperId(request.workspaceId)).signal(releaseSignal, { callId });
    throw error;
  }
  return { admitted: true, callId };
}
