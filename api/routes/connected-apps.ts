import { Router } from 'express';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { OAuthRefreshToken } from '../../db/models/oauth-refresh-token';
import { Workspace } from '../../db/models/workspace';
import { actorOf, sessionUserOf } from '../auth/context';
import { clientIp } from '../auth/sessions';
import { HttpError } from '../../domain/shared/http-error';
import { revokeFamily } from '../oauth/grants';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type ConnectedAppView = operations['listConnectedApps']['responses']['200']['content']['application/json'][number];

/**
 * The signed-in member's connected apps (MCP clients they authorized), in every workspace,
 * and revoking one: its refresh token and every access token it holds stop at once.
 * Session only: an app cannot list or revoke connections, its own included.
 */
export function connectedAppRoutes(deps: { now: () => Date }): Router {
  const router = apiRouter();

  router.get('/connected-apps', async (_req, res) => {
    const user = sessionUserOf(res);
    const now = deps.now();
    const families = await OAuthRefreshToken.find(
      { user_id: user.id, revoked_at: null },
      { client_id: 1, client_name: 1, workspace_id: 1, created_at: 1, refreshed_at: 1, current_expires_at: 1 },
    )
      .sort({ created_at: -1, _id: -1 })
      .lean();
    const live = families.filter((f) => f.current_expires_at > now);
    const workspaces = await Workspace.find({ _id: { $in: [...new Set(live.map((f) => f.workspace_id))] } }, { name: 1 }).lean();
    const names = new Map(workspaces.map((w) => [w._id, w.name]));
    res.json(
      live.map(
        (f) =>
          ({
            id: f._id,
            client_id: f.client_id,
            client_name: f.client_name,
            workspace: { id: f.workspace_id, name: names.get(f.workspace_id) ?? '' },
            connected_at: f.created_at,
            last_refreshed_at: f.refreshed_at ?? null,
            expires_at: f.current_expires_at,
          }) satisfies Record<keyof ConnectedAppView, unknown>,
      ),
    );
  });

  router.delete('/connected-apps/:app_id', async (req, res) => {
    const user = sessionUserOf(res);
    const family = await OAuthRefreshToken.findById(req.params.app_id, { user_id: 1, workspace_id: 1, client_id: 1, client_name: 1, revoked_at: 1 }).lean();
    if (!family || family.user_id !== user.id || family.revoked_at) throw new HttpError(404, 'connected app not found');
    const now = deps.now();
    if (await revokeFamily(family._id, 'revoked by the member', now)) {
      const target = { type: 'oauth_client', id: family.client_id, name: family.client_name };
      await recordWorkspaceAudit(family.workspace_id, {
        action: 'app.revoked',
        actor: actorOf(res),
        target,
        at: now,
        ip: clientIp(req),
        details: { connected_app_id: family._id },
      });
    }
    res.status(204).end();
  });

  return router;
}
