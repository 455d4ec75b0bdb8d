import { expect } from 'chai';
import type { BatchWorkflow } from '../../contracts/batches';
import type { CallWorkflow } from '../../contracts/calls';
import type { KycReviewWorkflow } from '../../contracts/kyc';
import type { SlotKeeperWorkflow } from '../../contracts/slots';
import type { WebhookDeliveryWorkflow, WebhookRedeliveryWorkflow } from '../../contracts/webhooks';
import { batchWorkflow } from '../../workflows/batch';
import { callWorkflow } from '../../workflows/call';
import { kycReviewWorkflow } from '../../workflows/kyc';
import { slotKeeperWorkflow } from '../../workflows/slots';
import { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery';
import { webhookRedeliveryWorkflow } from '../../workflows/webhook-redelivery';

/**
 * Clients start and signal workflows through signatures in contracts/, so that they
 * import no workflow code (no import cycle through the activities). The typecheck holds each
 * signature to its workflow: these assignments fail to compile when the two drift apart.
 */
describe('workflow signatures shared with clients', () => {
  it('are the workflows’ own', () => {
    const keeper: SlotKeeperWorkflow = slotKeeperWorkflow;
    const delivery: WebhookDeliveryWorkflow = webhookDeliveryWorkflow;
    const batch: BatchWorkflow = batchWorkflow;
    const redelivery: WebhookRedeliveryWorkflow = webhookRedeliveryWorkflow;
    const kyc: KycReviewWorkflow = kycReviewWorkflow;
    const call: CallWorkflow = callWorkflow;
    expect([keeper, delivery, batch, redelivery, kyc, call].map((workflow) => workflow.name)).to.deep.equal([
      'slotKeeperWorkflow',
      'webhookDeliveryWorkflow',
      'batchWorkflow',
      'webhookRedeliveryWorkflow',
      'kycReviewWorkflow',
      'callWorkflow',
    ]);
  });
});
