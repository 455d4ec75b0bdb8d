// The production workflow bundle's entry: every workflow type the workers register. Workflows
// only tests and benchmarks use are added by workflows/testing/index.ts, their bundle's entry.
export { roundTripWorkflow } from './roundtrip';
export { kycReviewWorkflow } from './kyc';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { webhookRedeliveryWorkflow } from './webhook-redelivery';
export { slotKeeperWorkflow } from './slots';
export { callWorkflow } from './call';
export { analyticsWorkflow } from './analytics';
export { batchWorkflow } from './batch';
export { paymentCheckWorkflow } from './payment-check';
export { personErasureWorkflow } from './privacy-erasure';
export { retentionWorkflow } from './retention';
export { workspaceClosureWorkflow } from './workspace-closure';
export { kycDocumentRetentionWorkflow } from './kyc-documents';
