import type { Client } from '@temporalio/client';
import { setKeeperLimit } from './temporal';
import { recordWorkspaceAudit } from '../audit/audit-log';
import { isDuplicateKeyError } from '../../db/errors';
import { newId } from '../../db/ids';
import { openCallCounts } from './open-calls';
import { LimitRequest, MAX_DECISION_NOTE_LENGTH, OpenLimitRequest, type LimitRequestDocument } from '../../db/models/limit-request';
import { Workspace } from '../../db/models/workspace';
import { planOf } from '../billing/plans';

/**
 * A workspace's concurrency limit and the requests to change it: opened by owners and admins
 * through the API, decided by staff with scripts/limits.ts. Staff may also set a limit
 * without a request. Whatever sets a limit writes it on the workspace first (a slot keeper
 * that starts later reads it there) and then tells the running keeper with `setLimit`.
 */

/** The most a staff member may set: a sanity bound against typos, above what anyone may ask. */
export const MAX_STAFF_LIMIT = 1000;
/** How many requests the workspace's history shows. */
export const LISTED_LIMIT_REQUESTS = 50;
/**
 * An open-request marker whose request record is missing is left by a process that died
 * between the two inserts; older than this, it is cleared. Younger, the request may be
 * being inserted right now.
 */
const STALE_MARKER_MS = 60_000;

export class LimitDecisionError extends Error {
  override name = 'LimitDecisionError';
}

/** The limit in force: the one staff set, else the plan's. */
export function limitInForce(workspace: { plan: string; concurrency_limit?: number | null }): number {
  return workspace.concurrency_limit ?? planOf(workspace.plan).concurrentCalls;
}

export interface CallLimits {
  concurrencyLimit: number;
  activeCalls: number;
  queuedCalls: number;
  pendingRequest: LimitRequestDocument | null;
}

/**
 * The limit, the live and queued calls, and the open request; null for an unknown workspace.
 * Counts come from the calls not yet ended (./open-calls.ts: their status as each call's
 * workflow writes it), so no Temporal round trip is needed, nor a read of every call.
 */
export async function callLimitsOf(workspaceId: string): Promise<CallLimits | null> {
  const [workspace, open, pendingRequest] = await Promise.all([
    Workspace.findById(workspaceId, { plan: 1, concurrency_limit: 1 }).lean(),
    openCallCounts(workspaceId, new Date()),
    openRequestOf(workspaceId),
  ]);
  if (!workspace) return null;
  return { concurrencyLimit: limitInForce(workspace), activeCalls: open.live, queuedCalls: open.queued, pendingRequest };
}

/** The workspace's latest requests, newest first. */
export async function listLimitRequests(workspaceId: string): Promise<LimitRequestDocument[]> {
  return LimitRequest.find({ workspace_id: workspaceId }).sort({ created_at: -1, _id: -1 }).limit(LISTED_LIMIT_REQUESTS).lean<LimitRequestDocument[]>();
}

async function openRequestOf(workspaceId: string): Promise<LimitRequestDocument | null> {
  const marker = await OpenLimitRequest.findById(workspaceId).lean();
  if (!marker) return null;
  const request = await LimitRequest.findById(marker.request_id).lean<LimitRequestDocument>();
  return request?.status === 'pending' ? request : null;
}

export interface NewLimitRequest {
  workspaceId: string;
  concurrencyLimit: number;
  reason: string;
  requestedBy: { user_id: string | null; name: string };
  at: Date;
}

export type OpenOutcome =
  | { kind: 'opened'; request: LimitRequestDocument }
  | { kind: 'already_open'; requestId: string }
  | { kind: 'unchanged'; limit: number }
  | { kind: 'no_workspace' };

/**
 * Opens a request, unless one is open already or it asks for the limit in force. Exact under
 * concurrency: the marker insert under the workspace's id lets one request in; the record is
 * inserted after it, and the marker is taken back if that insert fails.
 */
export async function openLimitRequest(input: NewLimitRequest): Promise<OpenOutcome> {
  const workspace = await Workspace.findById(input.workspaceId, { plan: 1, concurrency_limit: 1 }).lean();
  if (!workspace) return { kind: 'no_workspace' };
  const limit = limitInForce(workspace);
  if (input.concurrencyLimit === limit) return { kind: 'unchanged', limit };

  const request: LimitRequestDocument = {
    _id: newId(),
    workspace_id: input.workspaceId,
    concurrency_limit: input.concurrencyLimit,
    reason: input.reason.trim(),
    status: 'pending',
    requested_by: { user_id: input.requestedBy.user_id, name: input.requestedBy.name },
    created_at: input.at,
    decided_at: null,
    decided_by: null,
    decision_note: null,
  };
  const blocking = await claimMarker(input.workspaceId, request._id, input.at);
  if (blocking) return { kind: 'already_open', requestId: blocking };
  try {
    await LimitRequest.create(request);
  } catch (err) {
    await releaseMarker(input.workspaceId, request._id);
    throw err;
  }
  return { kind: 'opened', request };
}

/** Inserts the marker; answers the id of the open request in the way, or null when claimed. */
async function claimMarker(workspaceId: string, requestId: string, at: Date): Promise<string | null> {
  for (let attempt = 0; ; attempt++) {
    try {
      await OpenLimitRequest.create({ _id: workspaceId, request_id: requestId, created_at: at });
      return null;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    const marker = await OpenLimitRequest.findById(workspaceId).lean();
    if (!marker) continue; // decided meanwhile: try again
    if (attempt > 0 || !(await isStale(marker, at))) return marker.request_id;
    await releaseMarker(workspaceId, marker.request_id);
  }
}

/**
 * A marker no longer guards an open request when its request was decided (a decision that
 * died before clearing it) or was never inserted (an API that died between the inserts).
 */
async function isStale(marker: { request_id: string; created_at: Date }, at: Date): Promise<boolean> {
  const request = await LimitRequest.findById(marker.request_id, { status: 1 }).lean();
  if (request) return request.status !== 'pending';
  return at.getTime() - marker.created_at.getTime() > STALE_MARKER_MS;
}

async function releaseMarker(workspaceId: string, requestId: string): Promise<void> {
  await OpenLimitRequest.deleteOne({ _id: workspaceId, request_id: requestId });
}

/** Staff decisions need the Temporal client to tell a running slot keeper. */
export interface StaffDeps {
  temporal: Client;
}

/** `signalled` when a keeper runs; `not_running` when none does (one started later reads the workspace). */
export type KeeperNotice = 'signalled' | 'not_running';

/**
 * Approves a pending request with the limit asked for, or the `limit` staff give instead
 * (the decision note then says so). Sets the workspace's limit, marks the request approved,
 * closes it, audits `limits.approved` and tells the slot keeper. The limit is written first:
 * if the process dies after it, approving again finishes the decision.
 */
export async function approveLimitRequest(
  deps: StaffDeps,
  input: { requestId: string; limit?: number; by: string; at: Date },
): Promise<{ request: LimitRequestDocument; limit: number; keeper: KeeperNotice }> {
  const request = await pendingRequest(input.requestId);
  const limit = input.limit ?? request.concurrency_limit;
  assertStaffLimit(limit);
  const previous = await writeLimit(request.workspace_id, limit, input.at);
  const note = limit === request.concurrency_limit ? null : `approved with a limit of ${limit} instead of ${request.concurrency_limit}`;
  const decided = await decide(request, { status: 'approved', decided_at: input.at, decided_by: input.by, decision_note: note });
  await recordWorkspaceAudit(request.workspace_id, {
    action: 'limits.approved',
    actor: staff(input.by),
    target: { type: 'limit_request', id: request._id },
    at: input.at,
    details: { requested: request.concurrency_limit, from: limitInForce(previous), to: limit },
  });
  return { request: decided, limit, keeper: await tellKeeper(deps.temporal, request.workspace_id, limit) };
}

/** Rejects a pending request with a note the workspace reads; the limit stays as it is. */
export async function rejectLimitRequest(input: { requestId: string; note: string; by: string; at: Date }): Promise<{ request: LimitRequestDocument }> {
  const note = input.note.trim();
  if (!note) throw new LimitDecisionError('a rejection needs a note the workspace will read');
  if (note.length > MAX_DECISION_NOTE_LENGTH) throw new LimitDecisionError(`the note is longer than ${MAX_DECISION_NOTE_LENGTH} characters`);
  const request = await pendingRequest(input.requestId);
  const decided = await decide(request, { status: 'rejected', decided_at: input.at, decided_by: input.by, decision_note: note });
  await recordWorkspaceAudit(request.workspace_id, {
    action: 'limits.rejected',
    actor: staff(input.by),
    target: { type: 'limit_request', id: request._id },
    at: input.at,
    details: { requested: request.concurrency_limit, note },
  });
  return { request: decided };
}

/**
 * Sets a workspace's limit without a request; `null` goes back to the plan's. An open request
 * stays open (staff decide it separately). Answers the limit now in force.
 */
export async function setConcurrencyLimit(
  deps: StaffDeps,
  input: { workspaceId: string; limit: number | null; by: string; at: Date },
): Promise<{ limit: number; keeper: KeeperNotice }> {
  if (input.limit !== null) assertStaffLimit(input.limit);
  const previous = await writeLimit(input.workspaceId, input.limit, input.at);
  const limit = limitInForce({ plan: previous.plan, concurrency_limit: input.limit });
  await recordWorkspaceAudit(input.workspaceId, {
    action: 'limits.set',
    actor: staff(input.by),
    target: { type: 'workspace', id: input.workspaceId },
    at: input.at,
    details: { from: limitInForce(previous), to: limit, plan_limit: input.limit === null },
  });
  return { limit, keeper: await tellKeeper(deps.temporal, input.workspaceId, limit) };
}

async function pendingRequest(requestId: string): Promise<LimitRequestDocument> {
  const request = await LimitRequest.findById(requestId).lean<LimitRequestDocument>();
  if (!request) throw new LimitDecisionError(`no limit request with id ${requestId}`);
  if (request.status !== 'pending') {
    // A decision that died before closing the request left its marker: clear it now.
    await releaseMarker(request.workspace_id, request._id);
    throw new LimitDecisionError(
      `limit request ${requestId} is already ${request.status} (by ${request.decided_by ?? 'unknown'} at ${request.decided_at?.toISOString() ?? '?'})`,
    );
  }
  return request;
}

/** Records the decision, then closes the request so the workspace may open another. */
async function decide(
  request: LimitRequestDocument,
  decision: Pick<LimitRequestDocument, 'status' | 'decided_at' | 'decided_by' | 'decision_note'>,
): Promise<LimitRequestDocument> {
  const decided = await LimitRequest.findOneAndUpdate(
    { _id: request._id, status: 'pending' },
    { $set: decision },
    { returnDocument: 'after' },
  ).lean<LimitRequestDocument>();
  if (!decided) throw new LimitDecisionError(`limit request ${request._id} was decided by someone else meanwhile; check it before acting again`);
  await releaseMarker(request.workspace_id, request._id);
  return decided;
}

/** Writes the limit on the workspace; answers the workspace as it was before (FerretDB takes no projection here). */
async function writeLimit(workspaceId: string, limit: number | null, at: Date) {
  const previous = await Workspace.findByIdAndUpdate(workspaceId, { $set: { concurrency_limit: limit, updated_at: at } }, { returnDocument: 'before' }).lean();
  if (!previous) throw new LimitDecisionError(`no workspace with id ${workspaceId}`);
  return previous;
}

function assertStaffLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_STAFF_LIMIT) {
    throw new LimitDecisionError(`a limit is a whole number from 1 to ${MAX_STAFF_LIMIT}, not ${limit}`);
  }
}

/** A keeper that is not running needs nothing: it reads the workspace's limit when it starts. */
async function tellKeeper(temporal: Client, workspaceId: string, limit: number): Promise<KeeperNotice> {
  try {
    return await setKeeperLimit(temporal, workspaceId, limit);
  } catch (err) {
    // Everything else is done; setting the same limit again only repeats the signal.
    throw new LimitDecisionError(
      `the limit ${limit} is saved on workspace ${workspaceId}, but its slot keeper could not be told (${(err as Error).message}); run "npm run limits:set -- ${workspaceId} ${limit}" once Temporal answers`,
    );
  }
}

function staff(by: string) {
  return { type: 'staff' as const, id: null, name: by };
}
