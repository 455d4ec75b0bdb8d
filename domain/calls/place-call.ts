import type { Model } from 'mongoose';
import type { CallWorkflowInput } from '../../contracts/calls';
import { Call, type CallDocument } from '../../db/models/call';
import { QueuedCall } from '../../db/models/queued-call';
import { openCall } from './open-calls';
import { agentDataStorage } from '../privacy/data-storage';

export interface NewOutboundCall {
  callId: string;
  workspaceId: string;
  agent: { _id: string; name: string };
  toNumber: string;
  fromNumber: string;
  userData: Record<string, unknown>;
  /** A person's name or `key:<name>`. */
  placedBy: string;
  at: Date;
}

/**
 * An outbound call joins the queue: its record (`queued`), its `queued_calls` and `open_calls` entries, and
 * the input of its workflow (`call-<id>`, which the caller starts). POST /calls and batches
 * place calls this way. Safe to repeat with the same id (an activity retried): what exists stays.
 */
export async function createQueuedCall(call: NewOutboundCall): Promise<{ record: CallDocument; input: CallWorkflowInput }> {
  const record = {
    _id: call.callId,
    workspace_id: call.workspaceId,
    agent_id: call.agent._id,
    agent_name: call.agent.name,
    direction: 'outbound' as const,
    to_number: call.toNumber,
    from_number: call.fromNumber,
    status: 'queued' as const,
    user_data: call.userData,
    placed_by: call.placedBy,
    queued_at: call.at,
    data_storage: await agentDataStorage(call.agent._id),
    created_at: call.at,
    updated_at: call.at,
  };
  const [created] = await Promise.all([
    insertOnce(Call, record),
    insertOnce(QueuedCall, { _id: call.callId, workspace_id: call.workspaceId, queued_at: call.at }),
    openCall(call.callId, call.workspaceId, 'queued', call.at),
  ]);
  const input: CallWorkflowInput = {
    callId: call.callId,
    workspaceId: call.workspaceId,
    agentId: call.agent._id,
    direction: 'outbound',
    queuedAt: call.at.toISOString(),
    placedBy: call.placedBy,
    toNumber: call.toNumber,
    fromNumber: call.fromNumber,
    valueKeys: Object.keys(call.userData),
  };
  return { record: created as CallDocument, input };
}

const DUPLICATE_KEY = 11000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- either model: only create and findById are used
type AnyModel = Model<any>;

/** The document as created (defaults filled in), or as it already is. */
async function insertOnce(model: AnyModel, document: Record<string, unknown> & { _id: string }): Promise<unknown> {
  try {
    return (await model.create(document)).toObject();
  } catch (error) {
    if ((error as { code?: number }).code !== DUPLICATE_KEY) throw error;
    return model.findById(document._id).lean();
  }
}
