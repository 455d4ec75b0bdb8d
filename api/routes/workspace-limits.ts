import { Router } from 'express';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { listLimitRequests, openLimitRequest } from '../../domain/calls/limit-requests';
import type { operations } from '../../schemas/api-types';
import { callLimitsSummaryOf, limitRequestView } from '../../domain/calls/limits-view';
import { actorOf, creatorOf, workspaceAccessOf } from '../auth/context';
import { clientIp } from '../auth/sessions';
import { HttpError } from '../../domain/shared/http-error';
import { apiRouter } from './router';

type NewLimitRequestBody = operations['createLimitRequest']['requestBody']['content']['application/json'];

const workspaceNotFound = () => new HttpError(404, 'workspace not found');

/**
 * The workspace's concurrency limit and its requests for another one (contract, "Workspace"
 * and "Limits"). Staff decide requests with scripts/limits.ts. Every operation works while
 * the workspace is onboarding.
 */
export function workspaceLimitRoutes({ now }: { now: () => Date }): Router {
  const router = apiRouter();

  router.get('/workspace/limits', async (_req, res) => {
    res.json(await callLimitsSummaryOf(workspaceAccessOf(res).workspace.id));
  });

  router.get('/workspace/limits/requests', async (_req, res) => {
    const requests = await listLimitRequests(workspaceAccessOf(res).workspace.id);
    res.json(requests.map(limitRequestView));
  });

  router.post('/workspace/limits/requests', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as NewLimitRequestBody;
    const at = now();
    const outcome = await openLimitRequest({
      workspaceId: workspace.id,
      concurrencyLimit: body.concurrency_limit,
      reason: body.reason,
      requestedBy: creatorOf(res),
      at,
    });
    switch (outcome.kind) {
      case 'no_workspace':
        throw workspaceNotFound();
      case 'unchanged':
        throw new HttpError(409, `the workspace's concurrency limit is already ${outcome.limit}; ask for another one`);
      case 'already_open':
        throw new HttpError(409, `a limit request is already open (${outcome.requestId}); wait for the decision before asking again`);
    }
    const { request } = outcome;
    await recordWorkspaceAudit(workspace.id, {
      action: 'limits.requested',
      actor: actorOf(res),
      target: { type: 'limit_request', id: request._id },
      at,
      ip: clientIp(req),
      details: { concurrency_limit: request.concurrency_limit },
    });
    res.status(201).json(limitRequestView(request));
  });

  return router;
}
