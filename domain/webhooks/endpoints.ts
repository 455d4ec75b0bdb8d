import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { WebhookEndpoint } from '../../db/models/webhook-endpoint';
import { keepBodyAfterDelivery } from './kept-bodies';

export const ENDPOINT_DELETED = 'endpoint deleted';

/**
 * Deletes an endpoint and fails what it still had to deliver: every delivery of it is marked
 * as having lost its target (so an attempt already in flight cannot move it back), and those
 * pending or retrying become `failed`. Answers the ids whose delivery workflows are still to
 * be stopped; null when there is no such endpoint in the workspace. A workflow the caller
 * fails to stop finds the endpoint gone at its next attempt and fails itself.
 */
export async function deleteEndpoint(workspaceId: string, endpointId: string, now: Date): Promise<string[] | null> {
  const deleted = await WebhookEndpoint.findOneAndDelete({ _id: endpointId, workspace_id: workspaceId }).lean();
  if (!deleted) return null;
  const open = await WebhookDelivery.find({ endpoint_id: endpointId, status: { $in: ['pending', 'retrying'] } }, { _id: 1, body_after_delivery: 1 }).lean();
  await WebhookDelivery.updateMany({ endpoint_id: endpointId }, { $set: { target_deleted_at: now } });
  await WebhookDelivery.updateMany(
    { endpoint_id: endpointId, status: { $in: ['pending', 'retrying'] } },
    { $set: { status: 'failed', failure_reason: ENDPOINT_DELETED, next_attempt_at: null, updated_at: now } },
  );
  // Over now: they keep what their calls' data_storage allows (0213).
  for (const delivery of open) await keepBodyAfterDelivery(delivery);
  return open.map((d) => d._id);
}
