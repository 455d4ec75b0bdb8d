import { proxyActivities } from '@temporalio/workflow';

/**
 * The webhook benchmark's baseline (issue 18): the simplest workflow that does what a
 * delivery must, one activity that POSTs the signed body to the receiver. No store, no
 * search attributes, no retry schedule: Temporal's own floor for a delivery.
 */
export interface BaselineDeliveryInput {
  deliveryId: string;
  url: string;
  body: string;
}

export interface BaselineActivities {
  postSignedBody(input: BaselineDeliveryInput): Promise<number>;
}

const { postSignedBody } = proxyActivities<BaselineActivities>({ startToCloseTimeout: '40 seconds' });

export async function oneActivityDeliveryWorkflow(input: BaselineDeliveryInput): Promise<number> {
  return postSignedBody(input);
}
