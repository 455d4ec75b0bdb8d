import { createActivities, type ActivityDeps } from '../activities';
import { TASK_QUEUES, type TaskQueueRole } from '../workflows/shared/task-queues';

/**
 * What each worker role serves. A role with nothing yet is absent: a Temporal worker needs at
 * least one workflow or activity. Roles arrive with their features (calls, webhooks, ...).
 */
export interface RoleDefinition {
  taskQueue: string;
  /** Registers the workflow bundle on this queue. */
  workflows: boolean;
  activities: (deps: ActivityDeps) => Record<string, (...args: never[]) => unknown>;
}

export const WORKER_ROLES: Partial<Record<TaskQueueRole, RoleDefinition>> = {
  ops: { taskQueue: TASK_QUEUES.ops, workflows: true, activities: (deps) => createActivities(deps) },
};

export function parseRoles(raw: string | undefined): TaskQueueRole[] {
  const available = Object.keys(WORKER_ROLES) as TaskQueueRole[];
  if (!raw || raw === 'all') return available;
  const asked = raw.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = asked.filter((r) => !available.includes(r as TaskQueueRole));
  if (unknown.length) throw new Error(`unknown worker role(s) ${unknown.join(', ')}; known: ${available.join(', ')}`);
  return asked as TaskQueueRole[];
}
