import { Call } from '../../db/models/call';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { startClusterStack, type ClusterStack } from '../support/cluster';
import { answerToStreamSeconds, callees, loadWorkspace, placeCalls, slotHandoffs, untilCallsFinal } from '../support/cluster-load';
import { percentile } from './calls-stack';
import { cpuSampler, type ProcessRoles } from './cost';

export interface ClusterBenchResult {
  name: string;
  ok: boolean;
  lines: string[];
}

const CALLS = Number(process.env.BENCH_CLUSTER_CALLS || 120);
const LIMIT = 30;
const WARMUP_CALLS = 10;
/** Short calls: the load is the platform's work per call, not the callers' talk. */
const SCRIPT = { kind: 'answer' as const, answerAfterSeconds: 0.2, hangUpAfterSeconds: 2 };

interface ProfileRun {
  profile: string;
  calls: number;
  completed: number;
  seconds: number;
  deliveries: number;
  deliverySeconds: number;
  handoffs: number[];
  /** The callee's silence from the answer to the stream, seconds (connected calls). */
  answerToStream: number[];
  /** Cores used on average over the run, by process (role) name. */
  cores: Record<string, number>;
}

/**
 * The cluster profile against the dev server, one after the other on this machine, under the
 * same load: CALLS outbound calls against a limit of LIMIT, each delivering its events to a
 * webhook receiver. Sustained calls/s and deliveries/s, the slot handoff's p50/p95, and the CPU
 * each process used (cores, averaged over the run). Dev: `npm start`'s shape (one API, worker
 * and media process on the CLI dev server, SQLite file). Cluster: two of each on the Temporal
 * server with PostgreSQL.
 */
export async function clusterBench(): Promise<ClusterBenchResult> {
  const dev = await measure('dev', { api: 1, worker: 1, media: 1 });
  const cluster = await measure('cluster', { api: 2, worker: 2, media: 2 });
  const lines: string[] = [];
  for (const run of [dev, cluster]) {
    const total = Object.values(run.cores).reduce((a, b) => a + b, 0);
    lines.push(
      `${run.profile}: ${run.completed}/${run.calls} calls completed in ${run.seconds.toFixed(1)} s = ${(run.calls / run.seconds).toFixed(2)} calls/s; ${run.deliveries} webhook deliveries in ${run.deliverySeconds.toFixed(1)} s = ${(run.deliveries / run.deliverySeconds).toFixed(1)}/s; handoff p50 ${percentile(run.handoffs, 50).toFixed(0)} ms, p95 ${percentile(run.handoffs, 95).toFixed(0)} ms; answer to stream p50 ${percentile(run.answerToStream, 50).toFixed(2)} s, p95 ${percentile(run.answerToStream, 95).toFixed(2)} s`,
      `  CPU (cores, average over the run; ${total.toFixed(2)} in all): ${Object.entries(run.cores)
        .map(([name, cores]) => `${name} ${cores.toFixed(2)}`)
        .join(', ')}`,
      `  per core: ${(run.calls / run.seconds / total).toFixed(2)} calls/s, ${(run.deliveries / run.deliverySeconds / total).toFixed(1)} deliveries/s`,
    );
  }
  lines.push(
    `cluster / dev: calls/s ${(dev.seconds / cluster.seconds).toFixed(2)}x, deliveries/s ${(cluster.deliveries / cluster.deliverySeconds / (dev.deliveries / dev.deliverySeconds)).toFixed(2)}x, handoff p95 ${(percentile(cluster.handoffs, 95) / percentile(dev.handoffs, 95)).toFixed(2)}x`,
  );
  return { name: `cluster profile against the dev server (${CALLS} calls, limit ${LIMIT})`, ok: dev.completed === CALLS && cluster.completed === CALLS, lines };
}

async function measure(profile: 'dev' | 'cluster', nodes: { api: number; worker: number; media: number }): Promise<ProfileRun> {
  const stack = await startClusterStack({ temporal: profile, nodes });
  try {
    // Warm up: each node compiles and connects on its first calls.
    const warmup = await loadWorkspace(stack, LIMIT);
    await placeCalls(stack, warmup, callees(stack, WARMUP_CALLS, SCRIPT), WARMUP_CALLS);
    await untilCallsFinal(warmup.workspaceId, WARMUP_CALLS, 5 * 60_000);
    await warmup.close();

    const workspace = await loadWorkspace(stack, LIMIT);
    const cpu = cpuSampler(processRoles(stack));
    const startedAt = Date.now();
    const placements = await placeCalls(stack, workspace, callees(stack, CALLS, SCRIPT), 20);
    await untilCallsFinal(workspace.workspaceId, placements.filter((p) => p.status === 201).length, 15 * 60_000);
    const callsDoneAt = Date.now();
    // Deliveries: every one the calls' events made, until the receiver has them all.
    const deliveries = await WebhookDelivery.countDocuments({ workspace_id: workspace.workspaceId });
    await workspace.receiver.waitForRequests(deliveries, 5 * 60_000);
    const lastDelivery = Math.max(...workspace.receiver.received.map((r) => r.at));
    const seconds = (Date.now() - startedAt) / 1000;
    const used = cpu.stop();
    const cores = Object.fromEntries(Object.entries(used).map(([name, cpuSeconds]) => [name, cpuSeconds / seconds]));
    const completed = await Call.countDocuments({ workspace_id: workspace.workspaceId, status: 'completed' });
    const run = {
      profile,
      calls: CALLS,
      completed,
      seconds: (callsDoneAt - startedAt) / 1000,
      deliveries,
      deliverySeconds: (lastDelivery - startedAt) / 1000,
      handoffs: await slotHandoffs(workspace.workspaceId, LIMIT),
      answerToStream: await answerToStreamSeconds(workspace.workspaceId),
      cores,
    };
    await workspace.close();
    return run;
  } finally {
    await stack.stop();
  }
}

/** The stack's processes by name (PostgreSQL's backends count as its descendants), and this one. */
function processRoles(stack: ClusterStack): ProcessRoles {
  const roles: ProcessRoles = { 'load generator + simulators': [process.pid], ferretdb: [stack.ferret.child.pid!] };
  for (const proc of stack.temporal.processes()) roles[proc.name] = [proc.child.pid!];
  for (const node of stack.nodes) roles[node.name] = [node.process.child.pid!];
  return roles;
}
