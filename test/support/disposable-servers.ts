import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { DATABASE_NAME } from '../../config/env';
import { freePort, type ManagedProcess } from '../../scripts/infra/processes';
import { startFerretDb, startTemporalDevServer, waitForNamespace } from '../../scripts/infra/servers';

/**
 * A FerretDB (fast pragmas) and a Temporal dev server (our search attributes registered, as
 * the launcher does) of their own, on free ports, with their data in a temporary folder.
 * For benchmarks and reliability scripts that must not share servers with anything else.
 */
export interface DisposableServers {
  tempDir: string;
  mongodbUri: string;
  temporalAddress: string;
  namespace: string;
  /** The server processes (for a last-resort kill when the process exits abruptly). */
  processes: ManagedProcess[];
  /** Stops both servers; the folder (data and logs) is removed unless `keepFiles`. */
  stop(options?: { keepFiles?: boolean }): Promise<void>;
}

const NAMESPACE = 'default';

export async function startDisposableServers(prefix: string): Promise<DisposableServers> {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const started: ManagedProcess[] = [];
  const stop = async (options: { keepFiles?: boolean } = {}) => {
    await Promise.all(started.map((proc) => proc.stop()));
    if (!options.keepFiles) fs.rmSync(tempDir, { recursive: true, force: true });
  };
  try {
    const ferret = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(tempDir, 'ferretdb'),
      fast: true,
      output: { file: path.join(tempDir, 'ferretdb.log') },
    });
    started.push(ferret);
    const temporal = await startTemporalDevServer({
      port: await freePort(),
      uiPort: await freePort(),
      namespace: NAMESPACE,
      output: { file: path.join(tempDir, 'temporal.log') },
    });
    started.push(temporal);
    await waitForNamespace(temporal.address, NAMESPACE);
    return { tempDir, mongodbUri: ferret.uri(DATABASE_NAME), temporalAddress: temporal.address, namespace: NAMESPACE, processes: started, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Keeps workers' state changes and workflow logs (one per failed webhook attempt) out of the
 * output. With `onEntry`, every warning and error goes there instead of the console, the
 * native SDK core's too. The runtime can be installed once per process: false when it
 * already was (the first one stays).
 */
export function quietTemporalRuntime(onEntry?: (entry: LogEntry) => void): boolean {
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', onEntry),
      ...(onEntry ? { telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } } } : {}),
    });
    return true;
  } catch {
    return false;
  }
}
