import fs from 'node:fs';
import mongoose from 'mongoose';
import type { Client } from '@temporalio/client';

/**
 * What a unit of work (a delivery, a call, a request) costs, for every benchmark:
 * - `cpuSampler`: CPU seconds of each process by role, read from /proc/<pid>/stat;
 * - `countStoreOperations`: the store operations this process's mongoose makes;
 * - `temporalWork`: workflow tasks, activity tasks, local activities and history events per
 *   workflow, counted in the histories of sampled workflows.
 * `perUnit` and `describeCost` turn them into the lines a bench prints.
 */

/** Clock ticks per second of /proc's utime and stime (`getconf CLK_TCK`; 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

/** Process ids by role, e.g. `{ 'api+worker': [process.pid], temporal: [pid], ferretdb: [pid] }`. */
export type ProcessRoles = Record<string, number[]>;

export interface CpuSampler {
  /** CPU seconds used by each role since the sampler started (or since the last `restart`). */
  stop(): CpuSeconds;
  /** Starts a new measurement from now. */
  restart(): void;
}

export type CpuSeconds = Record<string, number>;

/**
 * Samples the CPU time (user + system, every thread) of each role's processes and of their
 * descendants (a process a role's process started, e.g. a server's helper; not one named in
 * a role of its own) from now on.
 * Processes that end meanwhile count up to their last reading.
 */
export function cpuSampler(roles: ProcessRoles): CpuSampler {
  let start = readRoles(roles);
  return {
    stop() {
      const end = readRoles(roles);
      const seconds: CpuSeconds = {};
      for (const role of Object.keys(roles)) {
        let ticks = 0;
        for (const [pid, value] of end[role]) ticks += value - (start[role].get(pid) ?? 0);
        seconds[role] = ticks / CLOCK_TICKS_PER_SECOND;
      }
      return seconds;
    },
    restart() {
      start = readRoles(roles);
    },
  };
}

function readRoles(roles: ProcessRoles): Record<string, Map<number, number>> {
  const children = childrenByParent();
  // A descendant named in a role of its own counts there only (the bench process starts the servers).
  const named = new Set(Object.values(roles).flat());
  const out: Record<string, Map<number, number>> = {};
  for (const [role, pids] of Object.entries(roles)) {
    const ticks = new Map<number, number>();
    const visit = (pid: number, top: boolean) => {
      if (ticks.has(pid) || (!top && named.has(pid))) return;
      const value = cpuTicks(pid);
      if (value === null) return;
      ticks.set(pid, value);
      for (const child of children.get(pid) ?? []) visit(child, false);
    };
    for (const pid of pids) visit(pid, true);
    out[role] = ticks;
  }
  return out;
}

/** utime + stime of a process (all its threads), in clock ticks; null when it is gone. */
export function cpuTicks(pid: number): number | null {
  const fields = statFields(pid);
  if (!fields) return null;
  // After "pid (comm)": state is field 3; utime and stime are fields 14 and 15 (1-based).
  return Number(fields[11]) + Number(fields[12]);
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number): string[] | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (!fields) continue;
    const parent = Number(fields[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  return children;
}

export interface StoreOperationCounter {
  /** Operations by `collection.method` since the counter started (or was reset). */
  counts(): Record<string, number>;
  total(): number;
  reset(): void;
  /** Stops counting. */
  stop(): void;
}

/**
 * Counts the store operations of this process's mongoose (every model operation: find,
 * insertOne, updateOne, findOneAndUpdate, ...), by collection and method. Processes of their
 * own (the media service, the API in another process) count their own.
 */
export function countStoreOperations(): StoreOperationCounter {
  let counts = new Map<string, number>();
  let on = true;
  mongoose.set('debug', (collection: string, method: string) => {
    if (!on || method === 'createIndex') return;
    const key = `${collection}.${method}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  return {
    counts: () => Object.fromEntries([...counts].sort((a, b) => b[1] - a[1])),
    total: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
    reset: () => {
      counts = new Map();
    },
    stop: () => {
      on = false;
      mongoose.set('debug', false);
    },
  };
}

export interface StoreTimer {
  /** Milliseconds the store's commands took (from sending each to its answer), summed, since the start or the last reset. */
  totalMs(): number;
  commands(): number;
  reset(): void;
  stop(): void;
}

/**
 * Sums the durations of this process's store commands, as the MongoDB driver reports them
 * (the connection must be made with `monitorCommands: true`, see db/connect.ts). Sequential
 * requests divide cleanly into the store's time and ours.
 */
export function timeStoreCommands(): StoreTimer {
  const client = mongoose.connection.getClient();
  let total = 0;
  let commands = 0;
  const onDone = (event: { duration: number }) => {
    total += event.duration;
    commands++;
  };
  client.on('commandSucceeded', onDone);
  client.on('commandFailed', onDone);
  return {
    totalMs: () => total,
    commands: () => commands,
    reset: () => {
      total = 0;
      commands = 0;
    },
    stop: () => {
      client.off('commandSucceeded', onDone);
      client.off('commandFailed', onDone);
    },
  };
}

export interface TemporalWork {
  workflows: number;
  /** Averages per workflow. */
  workflowTasks: number;
  activityTasks: number;
  localActivities: number;
  timers: number;
  historyEvents: number;
}

/**
 * Temporal work per workflow, from the histories of the given workflows (a sample of the
 * run's): workflow tasks completed, activity tasks scheduled, local activities (markers),
 * timers started and history events.
 */
export async function temporalWork(client: Client, workflowIds: string[]): Promise<TemporalWork> {
  const totals = { workflowTasks: 0, activityTasks: 0, localActivities: 0, timers: 0, historyEvents: 0 };
  let workflows = 0;
  for (const workflowId of workflowIds) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    workflows++;
    totals.historyEvents += events.length;
    for (const event of events) {
      if (event.workflowTaskCompletedEventAttributes) totals.workflowTasks++;
      if (event.activityTaskScheduledEventAttributes) totals.activityTasks++;
      if (event.markerRecordedEventAttributes) totals.localActivities++;
      if (event.timerStartedEventAttributes) totals.timers++;
    }
  }
  const per = (value: number) => (workflows ? value / workflows : NaN);
  return {
    workflows,
    workflowTasks: per(totals.workflowTasks),
    activityTasks: per(totals.activityTasks),
    localActivities: per(totals.localActivities),
    timers: per(totals.timers),
    historyEvents: per(totals.historyEvents),
  };
}

/** Evenly spread picks of at most `n` items (for sampling workflows). */
export function sample<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items.slice();
  const step = items.length / n;
  return Array.from({ length: n }, (_, i) => items[Math.floor(i * step)]);
}

export interface Cost {
  units: number;
  cpu: CpuSeconds;
  storeOperations?: Record<string, number>;
  temporal?: TemporalWork;
}

/** Milliseconds of CPU per unit, by role and in all. */
export function cpuMsPerUnit(cost: Cost): { total: number; byRole: Record<string, number> } {
  const byRole = Object.fromEntries(Object.entries(cost.cpu).map(([role, seconds]) => [role, (seconds * 1000) / cost.units]));
  return { total: Object.values(byRole).reduce((sum, ms) => sum + ms, 0), byRole };
}

export function storeOperationsPerUnit(cost: Cost): number {
  return Object.values(cost.storeOperations ?? {}).reduce((sum, n) => sum + n, 0) / cost.units;
}

/** `CPU 14.2 ms/delivery (temporal 6.1, worker 5.0, ferretdb 2.1, receiver 1.0); store 3.0 ops/delivery (...); Temporal 1.0 workflow tasks, ...` */
export function describeCost(cost: Cost, unit: string): string {
  const cpu = cpuMsPerUnit(cost);
  const parts = [
    `CPU ${cpu.total.toFixed(1)} ms/${unit} (${Object.entries(cpu.byRole)
      .map(([role, ms]) => `${role} ${ms.toFixed(1)}`)
      .join(', ')})`,
  ];
  if (cost.storeOperations) {
    const ops = Object.entries(cost.storeOperations).map(([op, n]) => `${op} ${(n / cost.units).toFixed(2)}`);
    parts.push(`store ${storeOperationsPerUnit(cost).toFixed(2)} ops/${unit}${ops.length ? ` (${ops.join(', ')})` : ''}`);
  }
  if (cost.temporal) {
    const t = cost.temporal;
    parts.push(
      `Temporal per workflow (${t.workflows} sampled): ${t.workflowTasks.toFixed(2)} workflow tasks, ${t.activityTasks.toFixed(2)} activity tasks, ${t.localActivities.toFixed(2)} local activities, ${t.historyEvents.toFixed(1)} history events`,
    );
  }
  return parts.join('; ');
}
