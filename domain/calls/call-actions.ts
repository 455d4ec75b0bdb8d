import type { Client } from '@temporalio/client';
import { assertWorkspaceOpen } from '../privacy/closing-gate';
import { findByIdOwned } from '../../db/by-id';
import { newId } from '../../db/ids';
import { Call, FINAL_CALL_STATUSES, type CallDocument } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';
import { createQueuedCall } from './place-call';
import type { operations } from '../../schemas/api-types';
import { creatorFor, type Caller } from '../accounts/principal';
import { HttpError, validationFailed } from '../shared/http-error';
import { isOnDoNotCallList } from './do-not-call';
import { outboundCaller } from './outbound-caller';
import { hangUpCallWorkflow, startCallWorkflow } from './temporal';
import { callEventView, callView, type StoredCallEvent } from './views';

export type NewCallBody = operations['placeCall']['requestBody']['content']['application/json'];
export type CallQuery = NonNullable<operations['listCalls']['parameters']['query']>;

/**
 * What the Calls endpoints do, apart from HTTP: placing, listing, reading and hanging up,
 * every lookup scoped by the caller's workspace. The routes (api/routes/calls.ts) and the MCP
 * tools (api/mcp) both call these. Inputs have passed the operation's schema already.
 */

/** Queues an outbound call and starts its workflow; answers the record as created. */
export async function placeCallAs(temporal: Client, caller: Caller, body: NewCallBody, at: Date): Promise<ReturnType<typeof callView>> {
  const workspaceId = caller.access.workspace.id;
  await assertWorkspaceOpen(workspaceId, 'a new call');
  const { agent, fromNumber } = await outboundCaller(workspaceId, body.agent_id, body.from_number);
  if (await isOnDoNotCallList(workspaceId, body.to_number)) {
    throw validationFailed([
      {
        type: 'value_error',
        loc: ['body', 'to_number'],
        msg: `${body.to_number} is on the workspace's do-not-call list: it may not be called (DELETE /do-not-call/{number} takes it off)`,
        input: body.to_number,
      },
    ]);
  }
  const { record, input } = await createQueuedCall({
    callId: newId(),
    workspaceId,
    agent,
    toNumber: body.to_number,
    fromNumber,
    userData: body.user_data ?? {},
    placedBy: creatorFor(caller.principal).name,
    at,
  });
  await startCallWorkflow(temporal, input, agent.name, 'queued');
  // The record as created (defaults filled in): the workflow has not changed it yet.
  return callView(record);
}

/** One page of the workspace's calls, newest first, and the count of all that match. */
export async function listCallsOf(workspaceId: string, query: CallQuery): Promise<{ items: ReturnType<typeof callView>[]; total: number }> {
  const filter: Record<string, unknown> = { workspace_id: workspaceId };
  if (query.status) filter.status = { $in: [...new Set(query.status.split(','))] };
  if (query.agent_id) filter.agent_id = query.agent_id;
  if (query.direction) filter.direction = query.direction;
  if (query.number) filter.$or = [{ to_number: query.number }, { from_number: query.number }];
  if (query.from || query.to) {
    filter.created_at = { ...(query.from ? { $gte: new Date(query.from) } : {}), ...(query.to ? { $lt: new Date(query.to) } : {}) };
  }
  const [items, total] = await Promise.all([
    Call.find(filter, { transcript: 0 })
      .sort({ created_at: -1, _id: -1 })
      .skip(query.skip ?? 0)
      .limit(query.limit ?? 50)
      .lean<CallDocument[]>(),
    Call.countDocuments(filter),
  ]);
  return { items: items.map(callView), total };
}

/** The workspace's call, or 404 (another workspace's call included). */
export async function findCallOf(workspaceId: string, callId: string): Promise<CallDocument> {
  const call = await findByIdOwned<CallDocument>(Call, callId, { workspace_id: workspaceId });
  if (!call) throw new HttpError(404, 'call not found');
  return call;
}

/** The call's timeline, oldest first. */
export async function callTimelineOf(call: CallDocument): Promise<ReturnType<typeof callEventView>[]> {
  const events = await CallEvent.find({ call_id: call._id }).sort({ sequence: 1 }).lean<StoredCallEvent[]>();
  return events.map(callEventView);
}

/** Cancels a queued call or ends a live one through its workflow; 409 when it has ended already. */
export async function hangUpCallAs(temporal: Client, caller: Caller, callId: string): Promise<ReturnType<typeof callView>> {
  const workspaceId = caller.access.workspace.id;
  const call = await findCallOf(workspaceId, callId);
  if (FINAL_CALL_STATUSES.includes(call.status)) throw new HttpError(409, `the call has already ended (${call.status})`);
  // False when the workflow ended between the read and the update: the answer is what it left.
  await hangUpCallWorkflow(temporal, call._id, creatorFor(caller.principal).name);
  return callView(await findCallOf(workspaceId, call._id));
}
