import type { Client } from '@temporalio/client';
import { agentDataStorage } from '../privacy/data-storage';
import { newId } from '../../db/ids';
import { Call, type CallStatus } from '../../db/models/call';
import { balanceOf } from '../billing/ledger';
import { followCallStatus, openCall } from './open-calls';
import type { EventLevel } from '../webhooks/event-types';
import { recordEvent } from '../webhooks/fan-out';
import type { CallWorkflowInput, MediaNodeChoice } from '../../contracts/calls';
import { releaseSlot, startCallWorkflow, tryAcquireSlot } from './temporal';

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
  /** The id the call is to have (an inbound call's id is chosen before it is admitted); new by default. */
  callId?: string;
  /**
   * Record a refused call (default true). Inbound: yes, someone rang the number and the call
   * list shows it. Browser: no, the person who asked is told at once (409 / 402) and nothing
   * happened on any line.
   */
  recordRefusal?: boolean;
  /** Inbound: the media node the answer sends the call's audio to (docs/decisions/0165). */
  mediaNode?: MediaNodeChoice;
}

/** Why a live call was not admitted; the same words go in the refused call's `hangup_reason`. */
export type LiveCallRefusal = 'agent paused' | 'out of credits' | 'concurrency limit reached';

/** Why a call was refused before it connected: the admission's reasons, and an inbound call to a number without an agent. */
export type CallRefusal = LiveCallRefusal | 'number not connected';

export type LiveCallAdmission = { admitted: true; callId: string } | { admitted: false; callId: string; reason: LiveCallRefusal };

/** The level of a refused call's `call.ended`: as for calls that never connected, error for credits. */
const REFUSAL_LEVELS: Record<CallRefusal, EventLevel> = {
  'agent paused': 'warning',
  'out of credits': 'error',
  'concurrency limit reached': 'warning',
  'number not connected': 'warning',
};

/**
 * Admits an inbound or browser call, which cannot wait in a queue: the agent must be active,
 * the balance above zero (billing rule 3), and a concurrency slot free at once (the slot
 * keeper's `tryAcquire`, starting the keeper if this is the workspace's first call). An
 * admitted call gets its record (`in-progress`) and its workflow, which begins at
 * `call.started` and gives the slot back when the call ends. A refused call is recorded
 * (see recordRefusedCall), so that it shows in the call list and on its timeline, unless
 * `recordRefusal` is false (browser calls).
 */
export async function admitLiveCall(temporal: Client, now: () => Date, request: LiveCallRequest): Promise<LiveCallAdmission> {
  const at = now();
  const callId = request.callId ?? newId();
  const record = liveCallRecord(callId, at, request);
  const refuse = async (reason: LiveCallRefusal): Promise<LiveCallAdmission> => {
    if (request.recordRefusal !== false) await recordRefusedCall(temporal, record, reason);
    return { admitted: false, callId, reason };
  };
  if (request.agent.status !== 'active') return refuse('agent paused');
  if ((await balanceOf(request.workspaceId)) <= 0) return refuse('out of credits');

  const granted = await tryAcquireSlot(temporal, request.workspaceId, { callId, channel: request.channel });
  if (!granted) return refuse('concurrency limit reached');

  try {
    const dataStorage = await agentDataStorage(request.agent._id);
    await Promise.all([
      Call.create({ ...record, status: 'in-progress' as CallStatus, started_at: at, data_storage: dataStorage }),
      openCall(callId, request.workspaceId, 'in-progress', at),
    ]);
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
      ...(request.mediaNode ? { mediaNode: request.mediaNode } : {}),
    };
    await startCallWorkflow(temporal, input, request.agent.name, 'in-progress');
  } catch (error) {
    // No workflow will end the record or give the slot back: do both here, the slot last (a live
    // record holds a slot, docs/decisions/0164), then fail the request.
    try {
      await Promise.all([
        Call.updateOne({ _id: callId }, { $set: { status: 'failed', ended_at: at, hangup_by: 'system', hangup_reason: 'error', updated_at: now() } }),
        followCallStatus(callId, 'failed'),
      ]);
    } finally {
      await releaseSlot(temporal, request.workspaceId, callId);
    }
    throw error;
  }
  return { admitted: true, callId };
}

/** The fields of a live call's record, the same whether it is admitted or refused. */
export interface LiveCallRecord {
  _id: string;
  workspace_id: string;
  /** Empty for an inbound call to a number connected to no agent. */
  agent_id: string;
  agent_name: string;
  direction: 'inbound' | 'browser';
  to_number: string;
  from_number: string;
  user_data: Record<string, unknown>;
  placed_by: string;
  provider_call_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export function liveCallRecord(
  callId: string,
  at: Date,
  request: Omit<LiveCallRequest, 'agent' | 'callId'> & { agent: { _id: string; name: string } | null },
): LiveCallRecord {
  return {
    _id: callId,
    workspace_id: request.workspaceId,
    agent_id: request.agent?._id ?? '',
    agent_name: request.agent?.name ?? '',
    direction: request.channel,
    to_number: request.toNumber,
    from_number: request.fromNumber,
    user_data: request.userData,
    placed_by: request.placedBy,
    provider_call_id: request.providerCallId ?? null,
    created_at: at,
    updated_at: at,
  };
}

/**
 * Records a live call refused before it connected: a `failed` record with the reason as its
 * `hangup_reason` (`hangup_by` system), and its whole timeline, `call.ended` with the reason
 * as the message, as the contract has it for every call that never connects (warning; error
 * for credits). Written from the API, as no workflow runs for such a call; sequence 0, so a
 * retried write records nothing twice.
 */
export async function recordRefusedCall(temporal: Client, record: LiveCallRecord, reason: CallRefusal): Promise<void> {
  const at = record.created_at;
  await Call.create({ ...record, status: 'failed' as CallStatus, ended_at: at, hangup_by: 'system', hangup_reason: reason });
  await recordEvent(
    {
      workspaceId: record.workspace_id,
      callId: record._id,
      agentId: record.agent_id,
      sequence: 0,
      type: 'call.ended',
      message: reason,
      level: REFUSAL_LEVELS[reason],
      latencyMs: null,
      data: {},
      createdAt: at.toISOString(),
    },
    { temporal, now: () => new Date() },
  );
}
