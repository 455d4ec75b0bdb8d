import { Router, type Request, type Response } from 'express';
import type { Client } from '@temporalio/client';
import { recordWorkspaceAudit, type AuditTarget } from '../../domain/audit/audit-log';
import { claimFirstFreeSlot } from '../../db/unique-claims';
import { MAX_WEBHOOK_ENDPOINTS, WebhookEndpoint, type WebhookEndpointDocument } from '../../db/models/webhook-endpoint';
import { deleteEndpoint } from '../../domain/webhooks/endpoints';
import { ALL_EVENTS } from '../../domain/webhooks/event-types';
import { newEndpointId } from '../../domain/webhooks/ids';
import { defaultSecretOf, rotateDefaultSecret } from '../../domain/webhooks/secrets';
import { newWebhookSecret, secretHint } from '../../domain/webhooks/signing';
import { sealSecret } from '../../contracts/secret-box';
import type { operations } from '../../schemas/api-types';
import { actorOf, creatorOf, workspaceAccessOf } from '../auth/context';
import { clientIp } from '../auth/sessions';
import { HttpError, validationFailed } from '../../domain/shared/http-error';
import { cancelWebhookWorkflows } from '../../domain/webhooks/temporal';
import { endpointIssues, normalisedEvents } from '../../domain/webhooks/endpoint-rules';
import { auditNameOf, endpointWithSecretView, eventTypeViews, webhookEndpointView } from '../../domain/webhooks/endpoint-views';
import { apiRouter } from './router';

type NewEndpointBody = operations['createWebhookEndpoint']['requestBody']['content']['application/json'];
type EndpointChangesBody = operations['updateWebhookEndpoint']['requestBody']['content']['application/json'];

/** The fields a change may set, as stored. */
type EndpointChanges = Partial<Pick<WebhookEndpointDocument, 'url' | 'description' | 'events' | 'active'>>;

const endpointNotFound = () => new HttpError(404, 'webhook endpoint not found');

/**
 * The workspace's webhook endpoints (create, list, change, delete, rotate the secret), the
 * event types they subscribe to, and the workspace's default secret. Every query is scoped by
 * the workspace id, so another workspace's endpoint is a 404. Secrets leave the API only in
 * the create and rotate answers.
 */
export function webhookRoutes({ temporal, now }: { temporal: Client; now: () => Date }): Router {
  const router = apiRouter();

  router.get('/webhooks/events', (_req, res) => {
    res.json(eventTypeViews());
  });

  router.get('/webhooks', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const endpoints = await WebhookEndpoint.find({ workspace_id: workspace.id }).sort({ created_at: -1, _id: -1 }).lean();
    res.json(endpoints.map(webhookEndpointView));
  });

  router.post('/webhooks', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as NewEndpointBody;
    const issues = endpointIssues(body);
    if (issues.length) throw validationFailed(issues);
    const at = now();
    const secret = newWebhookSecret();
    const endpoint = await insertInFreeSlot({
      _id: newEndpointId(),
      workspace_id: workspace.id,
      url: body.url,
      description: body.description ?? '',
      events: normalisedEvents(body.events ?? [ALL_EVENTS]),
      active: body.active ?? true,
      // Sealed at rest (docs/decisions/0196); this answer is the one time it is shown.
      secret: sealSecret(secret),
      secret_hint: secretHint(secret),
      created_by: creatorOf(res),
      created_at: at,
      updated_at: at,
      secret_rotated_at: null,
    });
    if (!endpoint) {
      throw new HttpError(409, `a workspace has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one before adding another`);
    }
    await audit(req, res, 'webhook.created', endpoint, at);
    res.status(201).json(endpointWithSecretView(endpoint, secret));
  });

  router.patch('/webhooks/:endpoint_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as EndpointChangesBody;
    const issues = endpointIssues(body);
    if (issues.length) throw validationFailed(issues);
    const scope = { _id: req.params.endpoint_id, workspace_id: workspace.id };
    const current = await WebhookEndpoint.findOne(scope).lean();
    if (!current) throw endpointNotFound();
    const changes = changesTo(current, body);
    const changed = Object.keys(changes);
    // Nothing to change (an empty body, or the values it already has): no write, no audit.
    if (!changed.length) {
      res.json(webhookEndpointView(current));
      return;
    }
    const at = now();
    const updated = await WebhookEndpoint.findOneAndUpdate(scope, { $set: { ...changes, updated_at: at } }, { returnDocument: 'after' }).lean();
    if (!updated) throw endpointNotFound(); // deleted meanwhile
    await audit(req, res, 'webhook.updated', updated, at, { fields: changed });
    res.json(webhookEndpointView(updated));
  });

  router.delete('/webhooks/:endpoint_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const at = now();
    const endpointId = req.params.endpoint_id;
    // Read first for the audit record's name: deleteEndpoint answers only the deliveries.
    const existing = await WebhookEndpoint.findOne({ _id: endpointId, workspace_id: workspace.id }, { url: 1 }).lean();
    if (!existing) throw endpointNotFound();
    const openDeliveries = await deleteEndpoint(workspace.id, endpointId, at);
    if (!openDeliveries) throw endpointNotFound(); // deleted meanwhile by another request
    await audit(req, res, 'webhook.deleted', existing, at);
    // The deliveries are failed already; stopping their workflows spares their next attempt,
    // which would find the endpoint gone and fail itself.
    await cancelWebhookWorkflows(temporal, openDeliveries);
    res.status(204).end();
  });

  router.post('/webhooks/:endpoint_id/rotate-secret', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const at = now();
    const secret = newWebhookSecret();
    // Every attempt reads the secret when it signs, so the old one stops with this write.
    const rotated = await WebhookEndpoint.findOneAndUpdate(
      { _id: req.params.endpoint_id, workspace_id: workspace.id },
      { $set: { secret: sealSecret(secret), secret_hint: secretHint(secret), secret_rotated_at: at, updated_at: at } },
      { returnDocument: 'after' },
    ).lean();
    if (!rotated) throw endpointNotFound();
    await audit(req, res, 'webhook.secret_rotated', rotated, at);
    res.json(endpointWithSecretView(rotated, secret));
  });

  router.get('/webhooks/default-secret', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const { secret_hint } = await defaultSecretOf(workspace.id, now());
    res.json({ secret_hint });
  });

  router.post('/webhooks/default-secret/rotate', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const at = now();
    const rotated = await rotateDefaultSecret(workspace.id, at);
    await recordWorkspaceAudit(workspace.id, {
      action: 'webhook.default_secret_rotated',
      actor: actorOf(res),
      target: { type: 'webhook_default_secret', id: workspace.id, name: null },
      at,
      ip: clientIp(req),
    });
    res.json({ secret: rotated.secret, secret_hint: rotated.secret_hint });
  });

  return router;
}

/**
 * Inserts the endpoint into the first free slot of its workspace (0 to 19); null when all are
 * taken. The slot's unique index decides between concurrent creates: of two inserting the same
 * slot one wins and the other tries the next free one, so the limit holds exactly.
 */
async function insertInFreeSlot(fields: Omit<WebhookEndpointDocument, 'slot'>): Promise<WebhookEndpointDocument | null> {
  const taken = new Set((await WebhookEndpoint.find({ workspace_id: fields.workspace_id }, { slot: 1 }).lean()).map((e) => e.slot));
  const slots = Array.from({ length: MAX_WEBHOOK_ENDPOINTS }, (_, slot) => slot);
  const slot = await claimFirstFreeSlot(slots, taken, (free) => WebhookEndpoint.create({ ...fields, slot: free }));
  return slot === null ? null : { ...fields, slot };
}

/** The fields of a change body whose values differ from the endpoint's. */
function changesTo(current: WebhookEndpointDocument, body: EndpointChangesBody): EndpointChanges {
  const changes: EndpointChanges = {};
  if (body.url !== undefined && body.url !== current.url) changes.url = body.url;
  if (body.description !== undefined && body.description !== current.description) changes.description = body.description;
  if (body.events !== undefined) {
    const events = normalisedEvents(body.events);
    if (events.join('\n') !== current.events.join('\n')) changes.events = events;
  }
  if (body.active !== undefined && body.active !== current.active) changes.active = body.active;
  return changes;
}

type EndpointAction = 'webhook.created' | 'webhook.updated' | 'webhook.deleted' | 'webhook.secret_rotated';

/** Audit records name the endpoint and what changed; never a secret. */
async function audit(
  req: Request,
  res: Response,
  action: EndpointAction,
  endpoint: Pick<WebhookEndpointDocument, '_id' | 'url'>,
  at: Date,
  details?: Record<string, unknown>,
) {
  const { workspace } = workspaceAccessOf(res);
  const target: AuditTarget = { type: 'webhook_endpoint', id: endpoint._id, name: auditNameOf(endpoint.url) };
  await recordWorkspaceAudit(workspace.id, { action, actor: actorOf(res), target, at, ip: clientIp(req), details });
}
