/** One task queue per worker role (architecture.md, "Temporal design"). */
export const TASK_QUEUES = {
  calls: 'calls',
  webhooks: 'webhooks',
  analytics: 'analytics',
  ops: 'ops',
  billing: 'billing',
  media: 'media',
} as const;

export type TaskQueueRole = keyof typeof TASK_QUEUES;

/**
 * A media node's own task queue, which only that node polls: a phone call's conversation runs
 * on the node its audio stream was sent to when the API answered (docs/decisions/0165).
 */
export function mediaNodeTaskQueue(nodeId: string): string {
  return `${TASK_QUEUES.media}-node-${nodeId}`;
}

/**
 * Automatic webhook retries run on a queue of their own, served by the `webhooks` role with a
 * bounded number of slots, so that an endpoint that times out (each retry holds a slot for
 * 10 s) can only use spare capacity: first attempts and manual retries, on `webhooks`, never
 * wait behind its retries. Under overload a retry may start later than its timer.
 */
export const WEBHOOK_RETRY_QUEUE = 'webhook-retries';

/** Retries at once per worker unless tuned (`WEBHOOK_RETRY_CONCURRENCY`): a timing-out endpoint holds each slot for 10 s. */
export const DEFAULT_WEBHOOK_RETRY_CONCURRENCY = 100;
