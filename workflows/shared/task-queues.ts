/** One task queue per worker role (architecture.md, "Temporal design"). */
export const TASK_QUEUES = {
  calls: 'calls',
  webhooks: 'webhooks',
  analytics: 'analytics',
  ops: 'ops',
  media: 'media',
} as const;

export type TaskQueueRole = keyof typeof TASK_QUEUES;
