// The workflow bundle's entry: every workflow type the workers register.
export { roundTripWorkflow } from './roundtrip';
export { kycReviewWorkflow } from './kyc';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { webhookRedeliveryWorkflow } from './webhook-redelivery';
