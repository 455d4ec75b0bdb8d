import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { findByIdOwned } from '../../db/by-id';
import { WebhookDelivery, type DeliveryStatus, type WebhookDeliveryDocument } from '../../db/models/webhook-delivery';
import { sendRetryNow, startDeliveryWorkflow } from './temporal';
import type { operations } from '../../schemas/api-types';
import { HttpError } from '../shared/http-error';
import { resultWithin } from '../shared/temporal';
import { DELIVERY_LIST_FIELDS, deliveryDetailView, deliveryView } from './delivery-views';

export type DeliveryQuery = NonNullable<operations['listWebhookDeliveries']['parameters']['query']>;

/** How long the API waits for a ping or a manual attempt (the target has 10 s). */
export const ATTEMPT_WAIT_MS = 30_000;

/**
 * Listing deliveries and retrying one: what GET /webhooks/deliveries and POST
 * /webhooks/deliveries/{id}/retry do, and the MCP tools that mirror them. Every lookup is
 * scoped by the workspace, so another workspace's delivery is a 404.
 */
export async function listDeliveriesOf(workspaceId: string, query: DeliveryQuery): Promise<{ items: ReturnType<typeof deliveryView>[]; total: number }> {
  if (query.endpoint_id && query.agent) {
    throw new HttpError(422, [{ type: 'value_error', loc: ['query', 'agent'], msg: 'give endpoint_id or agent, not both', input: query.agent }]);
  }
  const filter: Record<string, unknown> = { workspace_id: workspaceId };
  if (query.endpoint_id) filter.endpoint_id = query.endpoint_id;
  if (query.agent) Object.assign(filter, { target: 'agent', agent_id: query.agent });
  if (query.status) filter.status = { $in: [...new Set(query.status.split(','))] as DeliveryStatus[] };
  if (query.call_id) filter.call_id = query.call_id;
  const [items, total] = await Promise.all([
    WebhookDelivery.find(filter, DELIVERY_LIST_FIELDS)
      .sort({ created_at: -1, _id: -1 })
      .skip(query.skip ?? 0)
      .limit(query.limit ?? 50)
      .lean<WebhookDeliveryDocument[]>(),
    WebhookDelivery.countDocuments(filter),
  ]);
  return { items: items.map(deliveryView), total };
}

export async function findDeliveryOf(workspaceId: string, deliveryId: string): Promise<WebhookDeliveryDocument> {
  const delivery = await findByIdOwned<WebhookDeliveryDocument>(WebhookDelivery, deliveryId, { workspace_id: workspaceId });
  if (!delivery) throw new HttpError(404, 'webhook delivery not found');
  return delivery;
}

/** One extra attempt now; answers the delivery once it has ended (409 endpoint deleted, 503 not in time). */
export async function retryDeliveryOf(temporal: Client, workspaceId: string, deliveryId: string): Promise<Awaited<ReturnType<typeof deliveryDetailView>>> {
  const delivery = await findDeliveryOf(workspaceId, deliveryId);
  if (delivery.target_deleted_at) throw new HttpError(409, 'the endpoint of this delivery was deleted: there is nowhere to send it');
  const done = await resultWithin(temporal, () => retryNow(temporal, delivery), ATTEMPT_WAIT_MS);
  if (!done)
    throw new HttpError(503, 'the attempt did not end in time: the webhook workers may be down; it is still queued and will be made when they are back');
  return deliveryDetailView(await findDeliveryOf(workspaceId, delivery._id));
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
      await sendRetryNow(temporal, delivery._id);
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
        title: { eventType: delivery.event_type, url: delivery.url, callId: delivery.call_id },
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
