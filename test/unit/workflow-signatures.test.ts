import { expect } from 'chai';
import type { SlotKeeperWorkflow } from '../../workflows/shared/slots';
import type { WebhookDeliveryWorkflow } from '../../workflows/shared/webhooks';
import { slotKeeperWorkflow } from '../../workflows/slots';
import { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery';

/**
 * Clients start and signal workflows through signatures in workflows/shared, so that they
 * import no workflow code (no import cycle through the activities). The typecheck holds each
 * signature to its workflow: these assignments fail to compile when the two drift apart.
 */
describe('workflow signatures shared with clients', () => {
  it('are the workflows’ own', () => {
    const keeper: SlotKeeperWorkflow = slotKeeperWorkflow;
    const delivery: WebhookDeliveryWorkflow = webhookDeliveryWorkflow;
    expect([keeper.name, delivery.name]).to.deep.equal(['slotKeeperWorkflow', 'webhookDeliveryWorkflow']);
  });
});
