import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client, Connection, type WorkflowStartInput, type WorkflowStartOutput } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { systemClock } from '../../activities';
import { newId } from '../../db/ids';
import { forceLocalFirstAttempts } from '../../domain/webhooks/first-attempts';
import { recordEvent } from '../../domain/webhooks/fan-out';
import { signatureHeader } from '../../domain/webhooks/signing';
import { closeConnectionPools } from '../../providers/net/guarded-request';
import { bundleWorkflows, createWorkers, TESTING_WORKFLOWS_PATH } from '../../workers/bootstrap';
import type { BaselineDeliveryInput } from '../../workflows/testing/one-activity-delivery';
import type { DisposableServers } from '../support/disposable-servers';
import { storedEndpoint } from '../support/webhooks';
import { countStoreOperations, cpuSampler, sample, temporalWork, type Cost, type ProcessRoles } from './cost';
import type { ReceiverArrivals, ReceiverReady } from './receiver-process';
import { testEncryption } from '../support/payload-keys';

/**
 * The webhook deliveries' load and cost (issue 18), each measured next to the baseline of the
 * same run: the simplest Temporal workflow that does what a delivery must (one activity that
 * POSTs the signed body to the same receiver; workflows/testing/one-activity-delivery.ts).
 *
 * - An offered-load ladder: units (one event to one endpoint, or one baseline workflow) at
 *   fixed rates, each for `STEP_SECONDS`; latency from the unit's scheduled time (not the
 *   time it got going, so a backlog counts) to its first POST at the receiver. A rate is
 *   sustained when every unit arrived within the step's deadline and the p95 is under 1 s.
 *   Each system climbs until the first rate it does not sustain; the two alternate step by step.
 * - As fast as possible: `AFAP_UNITS` units with `AFAP_IN_FLIGHT` starts in flight; per unit,
 *   the CPU of every process, the store operations and the Temporal work (sampled histories).
 */
export const LADDER_RATES = (process.env.BENCH_WEBHOOK_RATES ?? '25,50,100,150,200,250,300,400').split(',').map(Number);
const STEP_SECONDS = Number(process.env.BENCH_WEBHOOK_STEP_SECONDS || 10);
/** After a step's last unit: how long its deliveries may still take to arrive. */
const STEP_GRACE_MS = 10_000;
export const AFAP_UNITS = Number(process.env.BENCH_WEBHOOK_AFAP_UNITS || 1200);
const AFAP_IN_FLIGHT = 64;
const AFAP_DEADLINE_MS = 180_000;
/** Units in flight at most in a ladder step (a system far past its capacity stops being fed). */
const MAX_IN_FLIGHT = 4_000;
export const SUSTAINED_P95_MS = 1_000;
const HISTORY_SAMPLES = 40;
const BASELINE_QUEUE = 'bench-baseline';

export type SystemName = 'baseline' | 'ours';

export interface StepResult {
  rate: number;
  units: number;
  arrived: number;
  p50: number;
  p95: number;
  sustained: boolean;
}

export interface AfapResult {
  units: number;
  arrived: number;
  perSecond: number;
  p50: number;
  p95: number;
  cost: Cost;
  eager: number | null;
}

export interface SystemResult {
  ladder: StepResult[];
  afap: AfapResult;
  /** The highest rate sustained (0: none). */
  sustained: number;
}

interface Receiver {
  url: string;
  pid: number;
  arrivals: Map<string, number>;
  close(): Promise<void>;
}

interface LoadStack {
  client: Client;
  roles: ProcessRoles;
  receiver: Receiver;
  /** Starts one unit of `system`; resolves with the workflow id once started. */
  start(system: SystemName): Promise<string>;
  readonly eagerStarts: number;
  stop(): Promise<void>;
}

/** The receiver process (test/bench/receiver-process.ts) and what arrived there. */
async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = fork(path.join(__dirname, 'receiver-process.ts'), [], { execArgv: ['--require', 'tsx/cjs'] });
  const arrivals = new Map<string, number>();
  const ready = await new Promise<ReceiverReady>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ReceiverReady));
    child.once('exit', (code) => reject(new Error(`the receiver process exited (${code})`)));
  });
  child.on('message', (message: ReceiverArrivals | ReceiverReady) => {
    if (message.type !== 'arrivals') return;
    for (const [id, at] of message.arrivals) if (!arrivals.has(id)) arrivals.set(id, at);
  });
  return {
    url: ready.url,
    pid: child.pid as number,
    arrivals,
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'close' });
      await exited;
    },
  };
}

/**
 * This process runs the `webhooks` worker as workers/main.ts builds it (the fan-out's client
 * shares its NativeConnection, so deliveries may start eagerly) and a worker of the baseline.
 * `BENCH_WEBHOOK_EAGER=0` gives the fan-out a client of its own (no eager start) and
 * `BENCH_WEBHOOK_LOCAL=0` turns the local first attempt off, to measure each on its own.
 */
async function startLoadStack(servers: DisposableServers): Promise<LoadStack> {
  const connection = await NativeConnection.connect({ address: servers.temporalAddress, plugins: [testEncryption.plugin] });
  const eager = process.env.BENCH_WEBHOOK_EAGER !== '0';
  // Counts the starts that went straight to this process's worker (eagerly started).
  const starts = { eager: 0 };
  const interceptors = {
    workflow: [
      {
        async startWithDetails(input: WorkflowStartInput, next: (input: WorkflowStartInput) => Promise<WorkflowStartOutput>) {
          const output = await next(input);
          if (output.eagerlyStarted) starts.eager++;
          return output;
        },
      },
    ],
  };
  const client = new Client({
    connection: eager ? connection : await Connection.connect({ address: servers.temporalAddress, plugins: [testEncryption.plugin] }),
    namespace: servers.namespace,
    interceptors,
  });
  const receiver = await startReceiver();
  const workflowBundle = await bundleWorkflows(TESTING_WORKFLOWS_PATH);
  const secret = `whsec_${newId()}`;
  const workers = [
    ...(await createWorkers({
      connection,
      namespace: servers.namespace,
      roles: ['webhooks'],
      deps: { clock: systemClock, temporal: client, webhooksAllowPrivateNetworks: true },
      workflows: { workflowBundle },
    })),
    await Worker.create({
      connection,
      namespace: servers.namespace,
      taskQueue: BASELINE_QUEUE,
      workflowBundle,
      activities: {
        async postSignedBody(input: BaselineDeliveryInput): Promise<number> {
          const t = Math.floor(Date.now() / 1000);
          const response = await fetch(input.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-service-delivery': input.deliveryId,
              'x-service-signature': signatureHeader(secret, t, input.body),
            },
            body: input.body,
            signal: AbortSignal.timeout(10_000),
          });
          await response.arrayBuffer();
          return response.status;
        },
      },
    }),
  ];
  if (process.env.BENCH_WEBHOOK_LOCAL === '0') forceLocalFirstAttempts(false);
  const running = Promise.all(workers.map((worker) => worker.run()));
  const endpoint = await storedEndpoint({ url: `${receiver.url}/healthy/ours` });
  const baselineUrl = `${receiver.url}/healthy/baseline`;
  const body = JSON.stringify({
    id: `evt_${newId()}`,
    type: 'call.started',
    created_at: new Date().toISOString(),
    workspace_id: endpoint.workspaceId,
    call_id: newId(),
    agent_id: '',
    data: { message: 'outbound call with Asha', level: 'info', latency_ms: null, channel: 'phone' },
  });
  let sequence = 0;
  const stack: LoadStack = {
    client,
    roles: {
      'bench process (worker, fan-out)': [process.pid],
      temporal: servers.processes.filter((p) => p.name === 'temporal').map((p) => p.child.pid as number),
      ferretdb: servers.processes.filter((p) => p.name === 'ferretdb').map((p) => p.child.pid as number),
      receiver: [receiver.pid],
    },
    receiver,
    get eagerStarts() {
      return starts.eager;
    },
    async start(system) {
      if (system === 'baseline') {
        const deliveryId = `bl_${newId()}`;
        await client.workflow.start('oneActivityDeliveryWorkflow', {
          taskQueue: BASELINE_QUEUE,
          workflowId: deliveryId,
          args: [{ deliveryId, url: baselineUrl, body }],
        });
        return deliveryId;
      }
      const recorded = await recordEvent(
        {
          workspaceId: endpoint.workspaceId,
          callId: newId(),
          agentId: '',
          sequence: sequence++,
          type: 'call.started',
          message: 'outbound call with Asha',
          level: 'info',
          latencyMs: null,
          data: { channel: 'phone' },
          createdAt: new Date().toISOString(),
        },
        { temporal: client, now: () => new Date() },
      );
      return recorded.deliveryIds[0];
    },
    async stop() {
      await receiver.close();
      closeConnectionPools();
      workers.forEach((worker) => worker.shutdown());
      await running;
      await connection.close();
      if (!eager) await client.connection.close();
    },
  };
  return stack;
}

/** One ladder step: `rate` units a second for STEP_SECONDS, then until all arrived or the grace ran out. */
async function runStep(stack: LoadStack, system: SystemName, rate: number): Promise<StepResult> {
  const total = Math.round(rate * STEP_SECONDS);
  const scheduledAt = new Map<string, number>();
  let inFlight = 0;
  let issued = 0;
  let failed = 0;
  const begin = Date.now();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((Date.now() - begin) / 1000) * rate));
      for (; issued < due && inFlight < MAX_IN_FLIGHT; issued++) {
        const at = begin + (issued * 1000) / rate;
        inFlight++;
        stack
          .start(system)
          .then((id) => scheduledAt.set(id, at))
          .catch(() => failed++)
          .finally(() => inFlight--);
      }
      if (issued >= total || Date.now() - begin > STEP_SECONDS * 1000 + STEP_GRACE_MS) {
        clearInterval(tick);
        resolve();
      }
    }, 5);
  });
  const deadline = begin + STEP_SECONDS * 1000 + STEP_GRACE_MS;
  while (Date.now() < deadline && (inFlight > 0 || [...scheduledAt.keys()].some((id) => !stack.receiver.arrivals.has(id)))) await sleep(100);
  const latencies = [...scheduledAt].filter(([id]) => stack.receiver.arrivals.has(id)).map(([id, at]) => (stack.receiver.arrivals.get(id) as number) - at);
  const p95 = rankedPercentile(latencies, total, 0.95);
  const arrived = latencies.length;
  if (failed) console.error(`[webhooks bench] ${system} at ${rate}/s: ${failed} starts failed`);
  return { rate, units: total, arrived, p50: rankedPercentile(latencies, total, 0.5), p95, sustained: arrived === total && p95 < SUSTAINED_P95_MS };
}

/** `AFAP_UNITS` units with AFAP_IN_FLIGHT starts in flight; the cost of each, measured over the whole phase. */
async function runAfap(stack: LoadStack, system: SystemName): Promise<AfapResult> {
  const scheduledAt = new Map<string, number>();
  const ids: string[] = [];
  const eagerBefore = stack.eagerStarts;
  const store = countStoreOperations();
  const cpu = cpuSampler(stack.roles);
  const begin = Date.now();
  const deadline = begin + AFAP_DEADLINE_MS;
  let next = 0;
  await Promise.all(
    Array.from({ length: AFAP_IN_FLIGHT }, async () => {
      while (next < AFAP_UNITS && Date.now() < deadline) {
        next++;
        const at = Date.now();
        const id = await stack.start(system);
        scheduledAt.set(id, at);
        ids.push(id);
      }
    }),
  );
  while (Date.now() < deadline && ids.some((id) => !stack.receiver.arrivals.has(id))) await sleep(50);
  // Let the workflows finish their last tasks (the delivery's write, the workflow's completion) before the CPU reading.
  await sleep(1_500);
  const cpuSeconds = cpu.stop();
  const storeOperations = store.counts();
  store.stop();
  const arrivals = ids.map((id) => stack.receiver.arrivals.get(id)).filter((at): at is number => at !== undefined);
  const lastArrival = Math.max(...arrivals);
  const latencies = ids
    .filter((id) => stack.receiver.arrivals.has(id))
    .map((id) => (stack.receiver.arrivals.get(id) as number) - (scheduledAt.get(id) as number));
  const temporal = await temporalWork(stack.client, sample(ids, HISTORY_SAMPLES));
  return {
    units: ids.length,
    arrived: arrivals.length,
    perSecond: arrivals.length / ((lastArrival - begin) / 1000),
    p50: rankedPercentile(latencies, ids.length, 0.5),
    p95: rankedPercentile(latencies, ids.length, 0.95),
    cost: { units: ids.length, cpu: cpuSeconds, storeOperations, temporal },
    eager: system === 'ours' ? stack.eagerStarts - eagerBefore : null,
  };
}

/** Runs both systems: the ladder (alternating step by step), then as fast as possible (baseline first, then ours, then both again; the better run of each counts). */
export async function runWebhookLoad(servers: DisposableServers): Promise<Record<SystemName, SystemResult>> {
  const stack = await startLoadStack(servers);
  try {
    // Warm-up: JIT, the workflow cache, the connections.
    for (const system of ['baseline', 'ours'] as const) await runStep(stack, system, 20);
    const results: Record<SystemName, SystemResult> = {
      baseline: { ladder: [], afap: undefined as unknown as AfapResult, sustained: 0 },
      ours: { ladder: [], afap: undefined as unknown as AfapResult, sustained: 0 },
    };
    const climbing = new Set<SystemName>(['baseline', 'ours']);
    for (const rate of LADDER_RATES) {
      for (const system of ['baseline', 'ours'] as const) {
        if (!climbing.has(system)) continue;
        const step = await runStep(stack, system, rate);
        console.error(
          `[webhooks bench] ${system} at ${rate}/s: ${step.arrived}/${step.units} arrived, p50 ${Math.round(step.p50)} ms, p95 ${Math.round(step.p95)} ms`,
        );
        results[system].ladder.push(step);
        if (step.sustained) results[system].sustained = rate;
        else climbing.delete(system);
        // Let a backlog drain before the next system's step.
        await sleep(step.sustained ? 1_000 : 15_000);
      }
      if (climbing.size === 0) break;
    }
    for (let round = 0; round < 2; round++) {
      for (const system of ['baseline', 'ours'] as const) {
        const afap = await runAfap(stack, system);
        console.error(`[webhooks bench] ${system} as fast as possible: ${afap.perSecond.toFixed(1)}/s (${afap.arrived}/${afap.units})`);
        if (!results[system].afap || afap.perSecond > results[system].afap.perSecond) results[system].afap = afap;
        await sleep(3_000);
      }
    }
    return results;
  } finally {
    await stack.stop();
  }
}

/** Units that never arrived rank after every one that did (Infinity if the rank falls on them). */
function rankedPercentile(values: number[], expected: number, q: number): number {
  if (expected === 0) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const rank = Math.min(expected - 1, Math.floor(q * expected));
  return rank < sorted.length ? sorted[rank] : Infinity;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
