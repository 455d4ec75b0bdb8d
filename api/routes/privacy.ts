import type { Client } from '@temporalio/client';
import type { Router } from 'express';
import { apiRouter } from './router';
import { erasureView, findErasureOf, requestPersonErasureAs } from '../../domain/privacy/erasures';
import { cancelWorkspaceClosureAs, closureView, requestWorkspaceClosureAs } from '../../domain/privacy/workspace-closure';
import { callerOf, workspaceAccessOf } from '../auth/context';
import { clientIp } from '../auth/sessions';

/**
 * Erasure by person (docs/decisions/0209): `POST /privacy/erasures` starts the workflow (202;
 * the same number and email while one runs answers that one), `GET /privacy/erasures/{id}`
 * shows its progress and what it erased. Closing the workspace: `POST /workspace/close` (202,
 * the erasure's time), `POST /workspace/close/cancel` (204) during the grace period.
 */
export function privacyRoutes({ temporal, now, closureGraceSeconds }: { temporal: Client; now: () => Date; closureGraceSeconds: number }): Router {
  const router = apiRouter();

  router.post('/privacy/erasures', async (req, res) => {
    const { erasure } = await requestPersonErasureAs(temporal, callerOf(res), req.body as { phone: string; email?: string | null }, now(), clientIp(req));
    res.status(202).location(`${req.baseUrl}/privacy/erasures/${erasure._id}`).json(erasureView(erasure));
  });

  router.get('/privacy/erasures/:erasure_id', async (req, res) => {
    res.json(erasureView(await findErasureOf(workspaceAccessOf(res).workspace.id, req.params.erasure_id)));
  });

  // Closing the workspace (docs/decisions/0210): its data erased after the grace period unless cancelled.
  router.post('/workspace/close', async (req, res) => {
    const { closure } = await requestWorkspaceClosureAs(temporal, callerOf(res), closureGraceSeconds, now(), clientIp(req));
    res.status(202).json(closureView(closure));
  });

  router.post('/workspace/close/cancel', async (req, res) => {
    await cancelWorkspaceClosureAs(temporal, callerOf(res), now(), clientIp(req));
    res.status(204).end();
  });

  return router;
}
