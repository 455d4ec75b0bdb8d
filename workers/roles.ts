import type { WorkerOptions } from '@temporalio/worker';
import { ACTIVITIES_BY_ROLE, type ActivityDeps } from '../activities';
import { MAX_LOCAL_IN_FLIGHT } from '../domain/webhooks/first-attempts';
import { DEFAULT_WEBHOOK_RETRY_CONCURRENCY, TASK_QUEUES, WEBHOOK_RETRY_QUEUE, type TaskQueueRole } from '../contracts/task-queues';

/**
 * What each worker role serves. A role with nothing yet is absent: a Temporal worker needs at
 * least one workflow or activity. Roles arrive with their features (calls, webhooks, ...).
 */
export interface RoleDefinition {
  taskQueue: string;
  /** Registers the workflow bundle on this queue. */
  workflows: boolean;
  activities: (deps: ActivityDeps) => Record<string, (...args: never[]) => unknown>;
  /** Tuning of this role's worker. */
  options?: (tuning: WorkerTuning) => Partial<WorkerOptions>;
  /** More task queues this role serves with the same activities (no workflows), each tuned on its own. */
  activityQueues?: (tuning: WorkerTuning) => { taskQueue: string; options: Partial<WorkerOptions> }[];
}

export interface WorkerTuning {
  webhookAttemptConcurrency: number;
  /** Automatic webhook retries at once per worker (their own queue: see WEBHOOK_RETRY_QUEUE). */
  webhookRetryConcurrency?: number;
}

/** Workflow task (and local activity) slots of the `webhooks` worker: above MAX_LOCAL_IN_FLIGHT, with room for everything else. */
export const WEBHOOK_WORKFLOW_TASK_SLOTS = 2 * MAX_LOCAL_IN_FLIGHT;

export const WORKER_ROLES: Partial<Record<TaskQueueRole, RoleDefinition>> = {
  calls: { taskQueue: TASK_QUEUES.calls, workflows: true, activities: ACTIVITIES_BY_ROLE.calls },
  ops: { taskQueue: TASK_QUEUES.ops, workflows: true, activities: ACTIVITIES_BY_ROLE.ops },
  analytics: { taskQueue: TASK_QUEUES.analytics, workflows: true, activities: ACTIVITIES_BY_ROLE.analytics },
  billing: { taskQueue: TASK_QUEUES.billing, workflows: true, activities: ACTIVITIES_BY_ROLE.billing },
  webhooks: {
    taskQueue: TASK_QUEUES.webhooks,
    workflows: true,
    activities: ACTIVITIES_BY_ROLE.webhooks,
    // An attempt mostly waits on the target (up to 10 s): many run at once, so that targets
    // that time out cannot hold every slot while healthy ones wait.
    // A local first attempt holds its workflow task until its target answers: the slots are
    // sized above the local attempts that may be in flight (first-attempts.ts, MAX_LOCAL_IN_FLIGHT).
    options: (tuning) => ({
      maxConcurrentActivityTaskExecutions: tuning.webhookAttemptConcurrency,
      maxConcurrentActivityTaskPolls: 20,
      maxConcurrentWorkflowTaskPolls: 10,
      maxConcurrentWorkflowTaskExecutions: WEBHOOK_WORKFLOW_TASK_SLOTS,
      maxConcurrentLocalActivityExecutions: WEBHOOK_WORKFLOW_TASK_SLOTS,
    }),
    activityQueues: (tuning) => [
      {
        taskQueue: WEBHOOK_RETRY_QUEUE,
        options: {
          maxConcurrentActivityTaskExecutions: tuning.webhookRetryConcurrency ?? DEFAULT_WEBHOOK_RETRY_CONCURRENCY,
          maxConcurrentActivityTaskPolls: 5,
        },
      },
    ],
  },
};

export function parseRoles(raw: string | undefined): TaskQueueRole[] {
  const available = Object.keys(WORKER_ROLES) as TaskQueueRole[];
  if (!raw || raw === 'all') return available;
  const asked = raw
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = asked.filter((r) => !available.includes(r as TaskQueueRole));
  if (unknown.length) throw new Error(`unknown worker role(s) ${unknown.join(', ')}; known: ${available.join(', ')}`);
  return asked as TaskQueueRole[];
}
