// The workflow bundle of tests and benchmarks: production's workflows and the stand-ins they use.
export * from '..';
// A stand-in call workflow that shows the slot keeper's grants.
export { slotProbeWorkflow } from './slot-probe';
// The slot handoff benchmark's baseline: a bare signal round trip.
export { signalEchoWorkflow, signalWaiterWorkflow } from './signal-echo';
// The webhook benchmark's baseline: one activity that POSTs the signed body.
export { oneActivityDeliveryWorkflow } from './one-activity-delivery';
