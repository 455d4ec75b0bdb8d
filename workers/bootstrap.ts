import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { systemClock, type ActivityDeps } from '../activities';
import type { TaskQueueRole } from '../workflows/shared/task-queues';
import { WORKER_ROLES, type WorkerTuning } from './roles';

const WORKFLOWS_PATH = require.resolve('../workflows');

/** The prebuilt bundle (npm run build) when there is one; otherwise bundle from source. */
export function workflowSource(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const prebuilt = path.resolve(__dirname, '..', 'workflow-bundle.js');
  if (fs.existsSync(prebuilt)) return { workflowBundle: { codePath: prebuilt } };
  return { workflowsPath: WORKFLOWS_PATH };
}

/** Bundles every workflow once (webpack); the bundler reports only warnings and errors. */
export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger });
}

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

export interface CreateWorkersOptions {
  connection: NativeConnection;
  namespace: string;
  roles: TaskQueueRole[];
  deps?: ActivityDeps;
  tuning?: WorkerTuning;
  /** Tests pass one bundle built once per run. */
  workflows?: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'>;
}

const DEFAULT_TUNING: WorkerTuning = { webhookAttemptConcurrency: 2_000 };

/** One worker per role on its own task queue, plus one per extra activity queue of the role. */
export async function createWorkers(options: CreateWorkersOptions): Promise<Worker[]> {
  const deps = options.deps ?? { clock: systemClock };
  const tuning = options.tuning ?? DEFAULT_TUNING;
  const workflows = options.workflows ?? workflowSource();
  const base = { connection: options.connection, namespace: options.namespace };
  return Promise.all(
    options.roles.flatMap((role) => {
      const definition = WORKER_ROLES[role];
      if (!definition) throw new Error(`no worker definition for role ${role}`);
      const activities = definition.activities(deps);
      return [
        Worker.create({ ...base, taskQueue: definition.taskQueue, activities, ...(definition.workflows ? workflows : {}), ...definition.options?.(tuning) }),
        ...(definition.activityQueues?.(tuning) ?? []).map((queue) => Worker.create({ ...base, taskQueue: queue.taskQueue, activities, ...queue.options })),
      ];
    }),
  );
}
