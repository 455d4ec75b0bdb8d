/**
 * Readable workflow ids built from business keys, so that ops can find a workflow in the
 * Temporal UI from an id they already have. One helper per workflow kind; nothing else
 * builds these strings.
 */
export const workflowIds = {
  roundTrip: (probeId: string) => `roundtrip-${probeId}`,
  kyc: (workspaceId: string) => `kyc-${workspaceId}`,
  slots: (workspaceId: string) => `slots-${workspaceId}`,
  call: (callId: string) => `call-${callId}`,
  analytics: (callId: string) => `analytics-${callId}`,
  batch: (batchId: string) => `batch-${batchId}`,
  /** One per gateway order, named by the order's id as the gateway's dashboard shows it. */
  paymentCheck: (orderId: string) => `payment-${orderId}`,
} as const;
