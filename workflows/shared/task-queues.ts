/** One task queue per worker role (architecture.md, "Temporal design"). */
export const TASK_QUEUES = {
  calls: 'calls',
  webhooks: 'webhooks',
  analytics: 'analytics',
  ops: 'ops',
  media: 'media',
} as const;

export type TaskQueueRole = keyof typeof TASK_QUEUES;

/**
 * Automatic webhook retries run on a queue of their own, served by the `webhooks` role with a
 * bounded number of slots, so that an endpoint that times out (each retry holds a slot for
 * 10 s) can only use spare capacity: first attempts and manual retries, on `webhooks`, never
 * wait behind its retries. Under overload a retry may start later than its timer.
 */
export const WEBHOOK_RETRY_QUEUE = 'webhook-retries';
