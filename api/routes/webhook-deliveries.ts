import { Router, type Response } from 'express';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { findByIdOwned } from '../../activities/db/by-id';
import { newId } from '../../activities/db/ids';
import { WebhookDelivery, type DeliveryStatus, type WebhookDeliveryDocument } from '../../activities/db/models/webhook-delivery';
import { WebhookEndpoint } from '../../activities/db/models/webhook-endpoint';
import { WebhookRedelivery, type WebhookRedeliveryDocument } from '../../activities/db/models/webhook-redelivery';
import { newDeliveryId, PING_EVENT_ID } from '../../activities/webhooks/ids';
import { webhookBody } from '../../activities/webhooks/payload';
import { startDeliveryWorkflow } from '../../activities/webhooks/workflows';
import type { operations } from '../../schemas/api-types';
import { retryNowUpdate, type RedeliveryInput } from '../../workflows/shared/webhooks';
import { Kind, WorkspaceId } from '../../workflows/shared/search-attributes';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';
import type { webhookRedeliveryWorkflow } from '../../workflows/webhook-redelivery';
import { creatorOf, workspaceAccessOf } from '../auth/context';
import { HttpError } from '../http-error';
import { ignoreWorkflowNotFound, resultWithin } from '../temporal';
import { DELIVERY_LIST_FIELDS, deliveryDetailView, deliveryView, redeliveryView } from '../webhooks/delivery-views';

type DeliveryQuery = NonNullable<operations['listWebhookDeliveries']['parameters']['query']>;
type NewRedelivery = operations['redeliverWebhookEndpoint']['requestBody']['content']['application/json'];

/** The fixed text of the test event. */
export const PING_MESSAGE = 'Test event from POST /webhooks/{endpoint_id}/test: your endpoint is reachable and can check signatures.';
/** How long the API waits for a ping or a manual attempt (the target has 10 s). */
const ATTEMPT_WAIT_MS = 30_000;

/**
 * Deliveries (list, get, manual retry), the ping test, and redelivery jobs. Every lookup is
 * scoped by the workspace, so another workspace's delivery is a 404.
 */
export function webhookDeliveryRoutes({ temporal, now }: { temporal: Client; now: () => Date }): Router {
  const router = Router();

  router.get('/webhooks/deliveries', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const query = req.query as unknown as DeliveryQuery;
    if (query.endpoint_id && query.agent) {
      throw new HttpError(422, [{ type: 'value_error', loc: ['query', 'agent'], msg: 'give endpoint_id or agent, not both', input: query.agent }]);
    }
    const filter: Record<string, unknown> = { workspace_id: workspace.id };
    if (query.endpoint_id) filter.endpoint_id = query.endpoint_id;
    if (query.agent) Object.assign(filter, { target: 'agent', agent_id: query.agent });
    if (query.status) filter.status = { $in: [...new Set(query.status.split(','))] as DeliveryStatus[] };
    if (query.call_id) filter.call_id = query.call_id;
    const [items, total] = await Promise.all([
      WebhookDelivery.find(filter, DELIVERY_LIST_FIELDS).sort({ created_at: -1, _id: -1 }).skip(query.skip ?? 0).limit(query.limit ?? 50).lean<WebhookDeliveryDocument[]>(),
      WebhookDelivery.countDocuments(filter),
    ]);
    res.json({ items: items.map(deliveryView), total });
  });

  router.get('/webhooks/deliveries/:delivery_id', async (req, res) => {
    res.json(await deliveryDetailView(await deliveryOf(res, req.params.delivery_id)));
  });

  router.post('/webhooks/deliveries/:delivery_id/retry', async (req, res) => {
    const delivery = await deliveryOf(res, req.params.delivery_id);
    if (delivery.target_deleted_at) throw new HttpError(409, 'the endpoint of this delivery was deleted: there is nowhere to send it');
    const done = await resultWithin(temporal, () => retryNow(temporal, delivery), ATTEMPT_WAIT_MS);
    if (!done) throw new HttpError(503, 'the attempt did not end in time: the webhook workers may be down; it is still queued and will be made when they are back');
    res.json(await deliveryDetailView(await deliveryOf(res, delivery._id)));
  });

  router.post('/webhooks/:endpoint_id/test', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const endpoint = await findByIdOwned<{ _id: string; url: string }>(WebhookEndpoint, req.params.endpoint_id, { workspace_id: workspace.id }, { url: 1 });
    if (!endpoint) throw new HttpError(404, 'webhook endpoint not found');
    const at = now();
    const deliveryId = newDeliveryId();
    const body = webhookBody({ id: PING_EVENT_ID, type: 'ping', created_at: at, workspace_id: workspace.id, call_id: '', agent_id: '', message: PING_MESSAGE, level: 'info', latency_ms: null, data: {} });
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
    const handle = await startDeliveryWorkflow(temporal, { deliveryId, workspaceId: workspace.id, mode: 'once', trigger: 'test', reuse: 'never' });
    const done = await resultWithin(temporal, () => handle.result(), ATTEMPT_WAIT_MS);
    if (!done) throw new HttpError(503, `the ping did not end in time: the webhook workers may be down; delivery ${deliveryId} is still queued`);
    res.json(await deliveryDetailView(await deliveryOf(res, deliveryId)));
  });

  router.post('/webhooks/:endpoint_id/redeliver', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const { since } = req.body as NewRedelivery;
    const endpoint = await findByIdOwned(WebhookEndpoint, req.params.endpoint_id, { workspace_id: workspace.id }, { _id: 1 });
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
    await temporal.workflow.start<typeof webhookRedeliveryWorkflow>('webhookRedeliveryWorkflow', {
      taskQueue: TASK_QUEUES.webhooks,
      workflowId: job._id,
      args: [input],
      typedSearchAttributes: [
        { key: WorkspaceId, value: workspace.id },
        { key: Kind, value: 'webhook_redelivery' },
      ],
    });
    res.status(202).json(redeliveryView(await redeliveryOf(res, job._id)));
  });

  router.get('/webhooks/redeliveries/:redelivery_id', async (req, res) => {
    res.json(redeliveryView(await redeliveryOf(res, req.params.redelivery_id)));
  });

  router.post('/webhooks/redeliveries/:redelivery_id/cancel', async (req, res) => {
    const job = await redeliveryOf(res, req.params.redelivery_id);
    if (job.status === 'running') await temporal.workflow.getHandle(job._id).cancel().catch(ignoreWorkflowNotFound);
    res.status(202).json(redeliveryView(await redeliveryOf(res, job._id)));
  });

  return router;
}

async function deliveryOf(res: Response, deliveryId: string): Promise<WebhookDeliveryDocument> {
  const { workspace } = workspaceAccessOf(res);
  const delivery = await findByIdOwned<WebhookDeliveryDocument>(WebhookDelivery, deliveryId, { workspace_id: workspace.id });
  if (!delivery) throw new HttpError(404, 'webhook delivery not found');
  return delivery;
}

async function redeliveryOf(res: Response, redeliveryId: string): Promise<WebhookRedeliveryDocument> {
  const { workspace } = workspaceAccessOf(res);
  const job = await findByIdOwned<WebhookRedeliveryDocument>(WebhookRedelivery, redeliveryId, { workspace_id: workspace.id });
  if (!job) throw new HttpError(404, 'redelivery not found');
  return job;
}

/**
 * One extra attempt: through the running workflow's `retryNow` update while its schedule runs
 * (so it never restarts the schedule), otherwise as a new one-attempt run of the same workflow
 * id, continuing the attempt count. Two retries racing to start that run: the loser sends its
 * update to the winner's run.
 */
async function retryNow(temporal: Client, delivery: WebhookDeliveryDocument): Promise<true> {
  for (let tries = 0; tries < 3; tries++) {
    try {
      await temporal.workflow.getHandle(delivery._id).executeUpdate(retryNowUpdate);
      return true;
    } catch (err) {
      if (!isClosedWorkflow(err)) throw err;
    }
    try {
      const handle = await startDeliveryWorkflow(temporal, {
        deliveryId: delivery._id,
        workspaceId: delivery.workspace_id,
        mode: 'once',
        trigger: 'manual',
        attemptsBefore: (await WebhookDelivery.findById(delivery._id, { attempt_count: 1 }).lean())?.attempt_count ?? 0,
        reuse: 'after-close',
      });
      await handle.result();
      return true;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  throw new HttpError(409, 'the delivery is being retried by someone else right now; try again in a moment');
}

/** An update to a workflow that is not running: no run at all, or the last one has completed. */
function isClosedWorkflow(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  return err instanceof WorkflowUpdateFailedError && /completed|closed|not found/i.test(String(err.cause?.message ?? err.message));
}
