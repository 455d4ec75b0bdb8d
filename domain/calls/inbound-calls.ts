import type { Client } from '@temporalio/client';
import { isWorkspaceErased } from '../privacy/closing-gate';
import { findByIdOwned } from '../../db/by-id';
import { isDuplicateKeyError } from '../../db/errors';
import { newId } from '../../db/ids';
import { Agent } from '../../db/models/agent';
import { PhoneNumber } from '../../db/models/phone-number';
import { PhoneNumberKey } from '../../db/models/phone-number-key';
import { ProviderCall } from '../../db/models/provider-call';
import type { Logger } from '../shared/logger';
import type { MediaNodeChoice } from '../../contracts/calls';
import { admitLiveCall, liveCallRecord, recordRefusedCall, type CallRefusal } from './admit-live-call';

/** A call to one of the provider account's numbers, as its answer request tells it. */
export interface InboundCallRequest {
  /** E.164: the number dialled. */
  to: string;
  /** The caller's number (E.164 when the provider gives one). */
  from: string;
  /** The provider's id of the call (Plivo's `CallUUID`). */
  providerCallId: string;
}

/**
 * What to answer the provider: connect the call to its agent (`callId` is live, or was taken
 * by an earlier answer request of the same call), or reject it. `callId` is null for a number
 * no workspace holds, which is only logged.
 */
export type InboundDecision =
  | { answer: true; callId: string; /** This request admitted the call (not a repeat of the first). */ admittedHere: boolean }
  | { answer: false; reason: CallRefusal | 'number unknown'; callId: string | null };

export interface InboundCallDeps {
  temporal: Client;
  now: () => Date;
  logger: Logger;
}

/**
 * Decides an inbound call: the number's workspace and agent, then the admission of a live
 * call (active agent, credits, a free slot: admitLiveCall). A number connected to no agent is
 * refused as `number not connected` and recorded in its workspace like any refusal. The
 * provider's call id is claimed first (ProviderCall), which links the provider's later
 * callbacks to the call and makes a repeated answer request answer the same call.
 */
export async function takeInboundCall(deps: InboundCallDeps, call: InboundCallRequest, mediaNode?: MediaNodeChoice): Promise<InboundDecision> {
  const number = await holderOf(call.to);
  if (!number) {
    deps.logger.info({ msg: 'inbound call to a number no workspace holds: rejected', to: call.to, from: call.from, provider_call_id: call.providerCallId });
    return { answer: false, reason: 'number unknown', callId: null };
  }
  // A closed workspace whose data is erased (docs/decisions/0210) keeps no new callers' data, not even a refused call's record.
  if (await isWorkspaceErased(number.workspace_id)) {
    deps.logger.info({ msg: 'inbound call to a closed workspace: rejected', workspace_id: number.workspace_id, provider_call_id: call.providerCallId });
    return { answer: false, reason: 'number unknown', callId: null };
  }
  const callId = newId();
  try {
    await ProviderCall.create({ _id: call.providerCallId, call_id: callId, workspace_id: number.workspace_id, created_at: deps.now() });
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const first = await ProviderCall.findById(call.providerCallId).lean();
    if (!first) throw error;
    // The provider asked again: the call is whatever the first request made of it.
    return { answer: true, callId: first.call_id, admittedHere: false };
  }

  const request = {
    workspaceId: number.workspace_id,
    channel: 'inbound' as const,
    toNumber: call.to,
    fromNumber: call.from,
    userData: {},
    placedBy: call.from,
    providerCallId: call.providerCallId,
  };
  const agent = number.agent_id
    ? await findByIdOwned<{ _id: string; name: string; status: string }>(Agent, number.agent_id, { workspace_id: number.workspace_id }, { name: 1, status: 1 })
    : null;
  if (!agent) {
    await recordRefusedCall(deps.temporal, liveCallRecord(callId, deps.now(), { ...request, agent: null }), 'number not connected');
    return { answer: false, reason: 'number not connected', callId };
  }
  const admission = await admitLiveCall(deps.temporal, deps.now, { ...request, agent, callId, ...(mediaNode ? { mediaNode } : {}) });
  return admission.admitted ? { answer: true, callId, admittedHere: true } : { answer: false, reason: admission.reason, callId };
}

/** Our call of a provider's inbound call, null when none was taken for it. */
export async function callOfProviderCall(providerCallId: string): Promise<string | null> {
  return (await ProviderCall.findById(providerCallId, { call_id: 1 }).lean())?.call_id ?? null;
}

interface HeldNumber {
  _id: string;
  number: string;
  workspace_id: string;
  agent_id: string | null;
}

/**
 * The record of the workspace holding the number, null when none does. Read by `_id` through
 * PhoneNumberKey; the first call to a number (or one whose hint went stale) looks it up by
 * its number and writes the hint.
 */
async function holderOf(number: string): Promise<HeldNumber | null> {
  const fields = { number: 1, workspace_id: 1, agent_id: 1 } as const;
  const key = await PhoneNumberKey.findById(number).lean();
  if (key) {
    const record = await PhoneNumber.findById(key.phone_number_id, fields).lean<HeldNumber>();
    if (record?.number === number) return record;
  }
  const record = await PhoneNumber.findOne({ number }, fields).lean<HeldNumber>();
  if (record) await PhoneNumberKey.updateOne({ _id: number }, { $set: { phone_number_id: record._id } }, { upsert: true });
  return record;
}
