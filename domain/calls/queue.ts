import type { CallRefusal } from '../../contracts/refusals';
import type { CallingHours } from '../../contracts/calling-hours';
import { QUEUE_EXPIRY_MS } from '../../contracts/calls';
import { Agent } from '../../db/models/agent';
import { Call, FINAL_CALL_STATUSES } from '../../db/models/call';
import { QueuedCall } from '../../db/models/queued-call';
import { followCallStatus } from './open-calls';
import { Workspace } from '../../db/models/workspace';
import { balanceOf } from '../billing/ledger';
import { isOnDoNotCallList } from './do-not-call';
import type { CallAgent, CallChanges } from '../../contracts/calls';

export type { CallAgent, CallChanges, CallTransferRecord } from '../../contracts/calls';

const DATE_FIELDS = new Set(['dequeued_at', 'ended_at', 'started_at']);

/**
 * 1 for the oldest queued call of the workspace (the one dialled next): the waiting calls
 * placed at or before this one (`queued_calls`, this one included; see its model), not
 * counting entries placed more than the queue's 24 hours before it.
 */
export async function queuePositionOf(workspaceId: string, queuedAt: Date): Promise<number> {
  const since = new Date(queuedAt.getTime() - QUEUE_EXPIRY_MS);
  const ahead = await QueuedCall.countDocuments({ workspace_id: workspaceId, queued_at: { $lte: queuedAt, $gte: since } });
  return Math.max(1, ahead);
}

/**
 * Why a call at the front may not be dialled (credits, the agent, the workspace, and with
 * `toNumber` the do-not-call list: a number listed while the call waited), with the agent as it
 * is now. Without a number (a batch's checks before it queues calls) the list is not read.
 */
export async function dialRefusalOf(
  workspaceId: string,
  agentId: string,
  toNumber?: string,
): Promise<{ refusal: CallRefusal; agent: CallAgent | null } | { refusal: null; agent: CallAgent }> {
  const [workspace, agent, balance, listed] = await Promise.all([
    Workspace.findById(workspaceId, { status: 1 }).lean(),
    readCallAgent(workspaceId, agentId),
    balanceOf(workspaceId),
    toNumber ? isOnDoNotCallList(workspaceId, toNumber) : false,
  ]);
  if (!agent) return { refusal: 'AgentDeleted', agent };
  if (agent.status === 'paused') return { refusal: 'AgentPaused', agent };
  if (workspace?.status !== 'active') return { refusal: 'WorkspaceInactive', agent };
  if (balance <= 0) return { refusal: 'OutOfCredits', agent };
  if (listed) return { refusal: 'DoNotCall', agent };
  return { refusal: null, agent };
}

/**
 * Writes the workflow's changes (and `extra` fields) to the call record, by id alone (see
 * db/by-id.ts). A call dequeued for its dial, or ended, leaves `queued_calls`; a new status is
 * written beside the record's in `open_calls` (an ended call leaves it).
 */
export async function writeCallChanges(callId: string, changes: CallChanges, now: Date, extra: Record<string, unknown> = {}): Promise<void> {
  const set: Record<string, unknown> = { ...extra, updated_at: now };
  for (const [key, value] of Object.entries(changes)) set[key] = DATE_FIELDS.has(key) && typeof value === 'string' ? new Date(value) : value;
  if (changes.transfer)
    set.transfer = { ...changes.transfer, transferred_at: changes.transfer.transferred_at ? new Date(changes.transfer.transferred_at) : null };
  const leftQueue = changes.dequeued_at !== undefined || (changes.status !== undefined && FINAL_CALL_STATUSES.includes(changes.status));
  await Promise.all([
    Call.updateOne({ _id: callId }, { $set: set }),
    leftQueue && QueuedCall.deleteOne({ _id: callId }),
    changes.status !== undefined && followCallStatus(callId, changes.status),
  ]);
}

/** The agent of a call as the workflow needs it, or null when it is gone (or another workspace's). */
export async function readCallAgent(workspaceId: string, agentId: string): Promise<CallAgent | null> {
  type Model = { provider: string; model: string };
  const [agent, workspace] = await Promise.all([
    Agent.findById(agentId, { workspace_id: 1, name: 1, status: 1, call: 1, llm: 1, voice: 1, transcriber: 1, webhook_url: 1 }).lean<{
      workspace_id: string;
      name: string;
      status: 'active' | 'paused';
      call: CallingHours & { max_duration_seconds: number; voicemail?: { detect?: boolean } };
      llm: Model;
      voice: Model;
      transcriber: Model;
      webhook_url?: string | null;
    }>(),
    Workspace.findById(workspaceId, { compliance: 1 }).lean<{ compliance?: { india_calling_hours?: boolean } }>(),
  ]);
  if (!agent || agent.workspace_id !== workspaceId) return null;
  const { call_start_hour, call_end_hour, timezone } = agent.call;
  const descriptor = (m: Model) => `${m.provider}/${m.model}`;
  return {
    name: agent.name,
    status: agent.status,
    hours: { call_start_hour, call_end_hour, timezone },
    maxDurationSeconds: agent.call.max_duration_seconds,
    stt: descriptor(agent.transcriber),
    llm: descriptor(agent.llm),
    tts: descriptor(agent.voice),
    webhookUrl: agent.webhook_url ?? null,
    detectsVoicemail: agent.call.voicemail?.detect === true,
    indiaCallingHours: workspace?.compliance?.india_calling_hours === true,
  };
}
