import { callLimitsOf } from './limit-requests';
import type { LimitRequestDocument } from '../../db/models/limit-request';
import type { components } from '../../schemas/api-types';
import { HttpError } from '../shared/http-error';

type LimitRequestView = Omit<components['schemas']['LimitRequest'], 'created_at' | 'decided_at'> & { created_at: Date; decided_at: Date | null };

/** The workspace's concurrency limit, live and queued calls and open request: GET /workspace/limits and the MCP tool `get_limits`. */
export async function callLimitsSummaryOf(workspaceId: string) {
  const limits = await callLimitsOf(workspaceId);
  if (!limits) throw new HttpError(404, 'workspace not found');
  return {
    concurrency_limit: limits.concurrencyLimit,
    active_calls: limits.activeCalls,
    queued_calls: limits.queuedCalls,
    pending_request: limits.pendingRequest && limitRequestView(limits.pendingRequest),
  };
}

export function limitRequestView(request: LimitRequestDocument): LimitRequestView {
  return {
    id: request._id,
    concurrency_limit: request.concurrency_limit,
    reason: request.reason,
    status: request.status,
    requested_by: request.requested_by.name,
    created_at: request.created_at,
    decided_at: request.decided_at ?? null,
    decided_by: request.decided_by ?? null,
    decision_note: request.decision_note ?? null,
  };
}
