// The workflow bundle's entry: every workflow type the workers register.
export { roundTripWorkflow } from './roundtrip';
export { kycReviewWorkflow } from './kyc';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { webhookRedeliveryWorkflow } from './webhook-redelivery';
export { slotKeeperWorkflow } from './slots';
// For tests and ops diagnostics: a stand-in call workflow that shows the slot keeper's grants.
export { slotProbeWorkflow } from './testing/slot-probe';
export { callWorkflow } from './call';
export { analyticsWorkflow } from './analytics';
export { batchWorkflow } from './batch';
// The slot handoff benchmark's baseline: a bare signal round trip.
export { signalEchoWorkflow, signalWaiterWorkflow } from './testing/signal-echo';
