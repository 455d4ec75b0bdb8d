import { Router, type Response } from 'express';
import type { Client } from '@temporalio/client';
import { findByIdOwned } from '../../db/by-id';
import { newId } from '../../db/ids';
import { WebhookDelivery, type WebhookDeliveryDocument } from '../../db/models/webhook-delivery';
import { WebhookEndpoint } from '../../db/models/webhook-endpoint';
import { WebhookRedelivery, type WebhookRedeliveryDocument } from '../../db/models/webhook-redelivery';
import { newDeliveryId, PING_EVENT_ID } from '../../domain/webhooks/ids';
import { webhookBody } from '../../domain/webhooks/payload';
import { cancelWebhookWorkflows, startDeliveryWorkflow, startRedeliveryWorkflow } from '../../domain/webhooks/temporal';
import type { operations } from '../../schemas/api-types';
import type { RedeliveryInput } from '../../contracts/webhooks';
import { creatorOf, workspaceAccessOf } from '../auth/context';
import { HttpError } from '../../domain/shared/http-error';
import { resultWithin } from '../../domain/shared/temporal';
import { deliveryDetailView, redeliveryView } from '../../domain/webhooks/delivery-views';
import { ATTEMPT_WAIT_MS, findDeliveryOf, listDeliveriesOf, retryDeliveryOf, type DeliveryQuery } from '../../domain/webhooks/delivery-actions';
import { apiRouter } from './router';

type NewRedelivery = operations['redeliverWebhookEndpoint']['requestBody']['content']['application/json'];

/** The fixed text of the test event. */
export const PING_MESSAGE = 'Test event from POST /webhooks/{endpoint_id}/test: your endpoint is reachable and can check signatures.';

/**
 * Deliveries (list, get, manual retry), the ping test, and redelivery jobs. Every lookup is
 * scoped by the workspace, so another workspace's delivery is a 404.
 */
export function webhookDeliveryRoutes({ temporal, now }: { temporal: Client; now: () => Date }): Router {
  const router = apiRouter();

  router.get('/webhooks/deliveries', async (req, res) => {
    res.json(await listDeliveriesOf(workspaceAccessOf(res).workspace.id, req.query as unknown as DeliveryQuery));
  });

  router.get('/webhooks/deliveries/:delivery_id', async (req, res) => {
    res.json(await deliveryDetailView(await deliveryOf(res, req.params.delivery_id)));
  });

  router.post('/webhooks/deliveries/:delivery_id/retry', async (req, res) => {
    res.json(await retryDeliveryOf(temporal, workspaceAccessOf(res).workspace.id, req.params.delivery_id));
  });

  router.post('/webhooks/:endpoint_id/test', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const endpoint = await findByIdOwned<{ _id: string; url: string }>(WebhookEndpoint, req.params.endpoint_id, { workspace_id: workspace.id }, { url: 1 });
    if (!endpoint) throw new HttpError(404, 'webhook endpoint not found');
    const at = now();
    const deliveryId = newDeliveryId();
    const body = webhookBody({
      id: PING_EVENT_ID,
      type: 'ping',
      created_at: at,
      workspace_id: workspace.id,
      call_id: '',
      agent_id: '',
      message: PING_MESSAGE,
      level: 'info',
      latency_ms: null,
      data: {},
    });
    await WebhookDelivery.create({
      _id: deliveryId,
      workspace_id: workspace.id,
      target: 'endpoint',
      endpoint_id: endpoint._id,
      url: endpoint.url,
      event_id: PING_EVENT_ID,
      event_type: 'ping',
      request_body: body,
      status: 'pending',
      retries: false,
      created_at: at,
      updated_at: at,
    });
    const handle = await startDeliveryWorkflow(temporal, {
      deliveryId,
      workspaceId: workspace.id,
      mode: 'once',
      trigger: 'test',
      reuse: 'never',
      title: { eventType: 'ping', url: endpoint.url },
    });
    const done = await resultWithin(temporal, () => handle.result(), ATTEMPT_WAIT_MS);
    if (!done) throw new HttpError(503, `the ping did not end in time: the webhook workers may be down; delivery ${deliveryId} is still queued`);
    res.json(await deliveryDetailView(await deliveryOf(res, deliveryId)));
  });

  router.post('/webhooks/:endpoint_id/redeliver', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const { since } = req.body as NewRedelivery;
    const endpoint = await findByIdOwned<{ _id: string; url: string }>(WebhookEndpoint, req.params.endpoint_id, { workspace_id: workspace.id }, { url: 1 });
    if (!endpoint) throw new HttpError(404, 'webhook endpoint not found');
    const job = {
      _id: `whr_${newId()}`,
      workspace_id: workspace.id,
      endpoint_id: req.params.endpoint_id,
      since: new Date(since),
      status: 'running' as const,
      created_by: creatorOf(res),
      created_at: now(),
    };
    await WebhookRedelivery.create(job);
    const input: RedeliveryInput = { redeliveryId: job._id, workspaceId: workspace.id, endpointId: job.endpoint_id, since: job.since.toISOString() };
    await startRedeliveryWorkflow(temporal, input, { endpointUrl: endpoint.url, askedBy: job.created_by.name });
    res.status(202).json(redeliveryView(await redeliveryOf(res, job._id)));
  });

  router.get('/webhooks/redeliveries/:redelivery_id', async (req, res) => {
    res.json(redeliveryView(await redeliveryOf(res, req.params.redelivery_id)));
  });

  router.post('/webhooks/redeliveries/:redelivery_id/cancel', async (req, res) => {
    const job = await redeliveryOf(res, req.params.redelivery_id);
    if (job.status === 'running') await cancelWebhookWorkflows(temporal, [job._id]);
    res.status(202).json(redeliveryView(await redeliveryOf(res, job._id)));
  });

  return router;
}

function deliveryOf(res: Response, deliveryId: string): Promise<WebhookDeliveryDocument> {
  return findDeliveryOf(workspaceAccessOf(res).workspace.id, deliveryId);
}

async function redeliveryOf(res: Response, redeliveryId: string): Promise<WebhookRedeliveryDocument> {
  const { workspace } = workspaceAccessOf(res);
  const job = await findByIdOwned<WebhookRedeliveryDocument>(WebhookRedelivery, redeliveryId, { workspace_id: workspace.id });
  if (!job) throw new HttpError(404, 'redelivery not found');
  return job;
}
