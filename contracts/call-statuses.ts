/**
 * Call statuses. `queued` waits for a slot (outbound only); `ringing` and `in-progress` are
 * live (they hold a concurrency slot); the rest are final. `no-answer`, `busy`, `failed` and
 * `canceled` are also the provider's statuses of a call that never connected.
 */
export const CALL_STATUSES = ['queued', 'ringing', 'in-progress', 'completed', 'no-answer', 'busy', 'failed', 'canceled'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
