import { Router, type Request, type Response } from 'express';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { newId } from '../../db/ids';
import { ApiKey } from '../../db/models/api-key';
import { actorOf, creatorOf, workspaceAccessOf } from '../auth/context';
import type { AuthDeps } from '../auth/deps';
import { lastUsedAt } from '../auth/rate-limit';
import { API_KEY_PREFIX, hashSecretToken, newSecretToken, shownPrefix } from '../auth/secret-tokens';
import { clientIp } from '../auth/sessions';
import { HttpError } from '../../domain/shared/http-error';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type NewApiKey = operations['createApiKey']['requestBody']['content']['application/json'];
type ApiKeyView = operations['listApiKeys']['responses']['200']['content']['application/json'][number];

interface StoredKey {
  _id: string;
  name: string;
  prefix: string;
  created_by?: { name: string } | null;
  created_at: Date;
}

/** API keys of the workspace: create (the full key shown once), list, revoke. */
export function keyRoutes(deps: AuthDeps): Router {
  const router = apiRouter();

  router.get('/keys', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const keys = await ApiKey.find({ workspace_id: workspace.id, revoked_at: null }, { name: 1, prefix: 1, created_by: 1, created_at: 1, last_used_at: 1 })
      .sort({ created_at: -1, _id: -1 })
      .lean();
    const used = await lastUsedAt('api_key', keys);
    res.json(keys.map((k) => keyView(k, used.get(k._id) ?? null)));
  });

  router.post('/keys', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const { name } = req.body as NewApiKey;
    const now = deps.now();
    const key = newSecretToken(API_KEY_PREFIX);
    const stored = {
      _id: newId(),
      workspace_id: workspace.id,
      name: name.trim(),
      prefix: shownPrefix(key),
      key_hash: hashSecretToken(key),
      created_by: creatorOf(res),
      created_at: now,
    };
    await ApiKey.create(stored);
    await audit(req, res, 'key.created', stored, now);
    res.status(201).json({ ...keyView(stored, null), key });
  });

  router.delete('/keys/:key_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const now = deps.now();
    // The next request with the key reads `revoked_at` (credentials.ts), in every process.
    const revoked = await ApiKey.findOneAndUpdate(
      { _id: req.params.key_id, workspace_id: workspace.id, revoked_at: null },
      { $set: { revoked_at: now } },
    ).lean();
    if (!revoked) throw new HttpError(404, 'key not found');
    await audit(req, res, 'key.revoked', revoked, now);
    res.status(204).end();
  });

  return router;
}

function keyView(key: StoredKey, lastUsed: Date | null) {
  return {
    id: key._id,
    name: key.name,
    prefix: key.prefix,
    created_by: key.created_by?.name ?? '',
    created_at: key.created_at,
    last_used_at: lastUsed,
  } satisfies Record<keyof ApiKeyView, unknown>;
}

async function audit(req: Request, res: Response, action: 'key.created' | 'key.revoked', key: StoredKey & { workspace_id: string }, at: Date) {
  await recordWorkspaceAudit(key.workspace_id, {
    action,
    actor: actorOf(res),
    target: { type: 'api_key', id: key._id, name: key.name },
    at,
    ip: clientIp(req),
  });
}
