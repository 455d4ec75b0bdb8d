import type { Client } from '@temporalio/client';
import mongoose from 'mongoose';

export interface DependencyHealth {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

/** Runs one dependency check: how long it took, or why it failed. */
async function timedCheck(check: () => Promise<unknown>): Promise<DependencyHealth> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    await check();
    return { ok: true, latency_ms: latency() };
  } catch (err) {
    return { ok: false, latency_ms: latency(), error: (err as Error).message };
  }
}

/** MongoDB answers a `ping` on the process's mongoose connection. */
export function pingMongo(): Promise<DependencyHealth> {
  return timedCheck(async () => {
    const db = mongoose.connection.db;
    if (!db || mongoose.connection.readyState !== 1) throw new Error('not connected');
    await db.admin().command({ ping: 1 });
  });
}

/** Temporal describes the client's namespace within `timeoutMs`. */
export function pingTemporal(client: Client, timeoutMs = 3000): Promise<DependencyHealth> {
  return timedCheck(() =>
    client.connection.withDeadline(Date.now() + timeoutMs, () => client.workflowService.describeNamespace({ namespace: client.options.namespace })),
  );
}
