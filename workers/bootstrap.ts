import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { systemClock, type ActivityDeps } from '../activities';
import { TASK_QUEUES, type TaskQueueRole } from '../contracts/task-queues';
import { hostLocalFirstAttempts } from '../domain/webhooks/first-attempts';
import { FAILURE_CONVERTER_PATH } from '../domain/shared/payload-encryption';
import { WORKER_ROLES, type WorkerTuning } from './roles';

const WORKFLOWS_PATH = require.resolve('../workflows');

/** The prebuilt bundle (npm run build) when there is one; otherwise bundle from source. */
export function workflowSource(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const prebuilt = path.resolve(__dirname, '..', 'workflow-bundle.js');
  if (fs.existsSync(prebuilt)) return { workflowBundle: { codePath: prebuilt } };
  return { workflowsPath: WORKFLOWS_PATH };
}

/** The entry of the bundle tests and benchmarks run: production's workflows and their stand-ins. */
export const TESTING_WORKFLOWS_PATH = require.resolve('../workflows/testing');

/**
 * Bundles the workflows once (webpack): production's by default, or another entry's (tests
 * pass TESTING_WORKFLOWS_PATH); the bundler reports only warnings and errors. The sandbox's
 * failure converter puts failures' messages into their encrypted attributes (docs/decisions/0200).
 */
export function bundleWorkflows(workflowsPath = WORKFLOWS_PATH, options: { tracing?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    // The prebuilt bundle carries the OpenTelemetry workflow interceptors, which a worker cannot add to a bundle later.
    ...(options.tracing ? { workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS] } : {}),
    logger: quietBundlerLogger,
  });
}

/** The OpenTelemetry workflow interceptors (spans of workflows, headers to their activities and children). */
const OTEL_WORKFLOW_INTERCEPTORS = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/**
 * The sink the OpenTelemetry workflow interceptors report spans to, dropping them: a prebuilt
 * bundle carries the interceptors, and with tracing off nothing else installs the sink (with
 * tracing on, the tracing plugin's sink replaces this one).
 */
const DROPPED_WORKFLOW_SPANS: WorkerOptions['sinks'] = { exporter: { export: { fn: () => undefined } } };

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
  /** How long a shut-down worker lets running activities finish before cancelling them (default: the SDK's, none). */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
}

/**
 * The worker process's grace on SIGINT/SIGTERM: a webhook attempt waits at most 10 s for its
 * target and the calls' database steps are short, so 15 s lets what runs finish instead of
 * being retried elsewhere after its timeout.
 */
export const WORKER_SHUTDOWN_GRACE = '15 seconds';

const DEFAULT_TUNING: WorkerTuning = { webhookAttemptConcurrency: 2_000 };

/** One worker per role on its own task queue, plus one per extra activity queue of the role. */
export async function createWorkers(options: CreateWorkersOptions): Promise<Worker[]> {
  const deps = options.deps ?? { clock: systemClock };
  const tuning = options.tuning ?? DEFAULT_TUNING;
  const workflows = options.workflows ?? workflowSource();
  const base = {
    connection: options.connection,
    namespace: options.namespace,
    ...(workflows.workflowBundle ? { sinks: DROPPED_WORKFLOW_SPANS } : {}),
    ...(options.shutdownGraceTime ? { shutdownGraceTime: options.shutdownGraceTime } : {}),
  };
  const workers = await Promise.all(
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
  // While the webhooks worker runs, fan-outs in this process may start deliveries eagerly on it, with a local first attempt.
  for (const worker of workers) if (worker.options.taskQueue === TASK_QUEUES.webhooks) hostLocalFirstAttempts(worker);
  return workers;
}
