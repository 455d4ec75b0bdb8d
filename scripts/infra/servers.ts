import fs from 'node:fs';
import path from 'node:path';
import { pingTemporal } from '../../api/health-checks';
import { createTemporalClient } from '../../domain/shared/temporal';
import { searchAttributeRegistrations } from '../../contracts/search-attributes';
import { requireTool, startProcess, waitForPort, type LocalDataServerOptions, type ManagedProcess, type StartOptions } from './processes';

/** `dataDir` holds the SQLite files and FerretDB's state; `fast`: SQLite `synchronous(off)`. */
export type FerretDbOptions = LocalDataServerOptions;

/** FerretDB with its SQLite backend; resolves once it accepts connections. */
export async function startFerretDb(options: FerretDbOptions): Promise<ManagedProcess & { uri: (db: string) => string }> {
  const host = options.host ?? '127.0.0.1';
  fs.mkdirSync(options.dataDir, { recursive: true });
  const pragma = options.fast ? '?_pragma=synchronous(off)&_pragma=journal_mode(wal)' : '';
  const proc = startProcess({
    name: 'ferretdb',
    command: requireTool('ferretdb'),
    args: [
      '--handler=sqlite',
      `--sqlite-url=file:${options.dataDir}/${pragma}`,
      `--listen-addr=${host}:${options.port}`,
      `--state-dir=${options.dataDir}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
    ],
    output: options.output,
    ownProcessGroup: options.ownProcessGroup,
    niceness: options.niceness,
  });
  await waitForPort(host, options.port, 30_000, proc);
  return { ...proc, uri: (db) => `mongodb://${host}:${options.port}/${db}` };
}

export interface TemporalDevServerOptions {
  host?: string;
  port: number;
  uiPort: number;
  /**
   * SQLite file of the dev server (kept across restarts). Omitted: everything stays in memory,
   * for tests and benchmarks, where it doubles throughput on 2 cores (1,000 webhook deliveries:
   * 63 against 33 per second).
   */
  dbFile?: string;
  namespace?: string;
  /** The codec server the Web UI decodes payloads through (`--ui-codec-endpoint`; docs/decisions/0201). */
  uiCodecEndpoint?: string;
  output: StartOptions['output'];
  ownProcessGroup?: boolean;
  niceness?: StartOptions['niceness'];
}

/**
 * The Temporal CLI dev server with the Web UI and our custom search attributes registered.
 * Resolves once the frontend accepts connections.
 */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<ManagedProcess & { address: string }> {
  const host = options.host ?? '127.0.0.1';
  if (options.dbFile) fs.mkdirSync(path.dirname(options.dbFile), { recursive: true });
  const proc = startProcess({
    name: 'temporal',
    command: requireTool('temporal'),
    args: [
      'server',
      'start-dev',
      '--ip',
      host,
      '--port',
      String(options.port),
      '--ui-port',
      String(options.uiPort),
      ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
      ...(options.uiCodecEndpoint ? ['--ui-codec-endpoint', options.uiCodecEndpoint] : []),
      '--namespace',
      options.namespace ?? 'default',
      '--log-level',
      'error',
      // An activity scheduled by a workflow task goes straight back to the worker that completed
      // the task when it has a free slot, saving a poll round trip per activity.
      '--dynamic-config-value',
      'system.enableActivityEagerExecution=true',
      // One server and a few workers: task queue partitions only add forwarding between them
      // (the default of four split pollers and tasks four ways on every queue).
      '--dynamic-config-value',
      'matching.numTaskqueueReadPartitions=1',
      '--dynamic-config-value',
      'matching.numTaskqueueWritePartitions=1',
      ...searchAttributeRegistrations(),
    ],
    output: options.output,
    ownProcessGroup: options.ownProcessGroup,
    niceness: options.niceness,
  });
  await waitForPort(host, options.port, 60_000, proc);
  return { ...proc, address: `${host}:${options.port}` };
}

/** The dev server accepts connections before its namespace is ready; wait for both. */
export async function waitForNamespace(address: string, namespace: string): Promise<void> {
  // A ping only: it reads and writes no payloads.
  const client = createTemporalClient(address, namespace, null, null);
  try {
    const deadline = Date.now() + 60_000;
    let health = await pingTemporal(client);
    while (!health.ok && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      health = await pingTemporal(client);
    }
    if (!health.ok) throw new Error(`Temporal at ${address} did not serve namespace "${namespace}" within 60 s: ${health.error}`);
  } finally {
    await client.connection.close();
  }
}
