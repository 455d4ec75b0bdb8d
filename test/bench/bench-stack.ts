import fs from 'node:fs';
import { useTestDataKeys } from '../support/data-keys';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { Client, Connection } from '@temporalio/client';
import { connectMongo, disconnectMongo } from '../../db/connect';
import { newId } from '../../db/ids';
import { Workspace } from '../../db/models/workspace';
import { GENEROUS_ADDRESS_LIMITS } from '../support/api';
import { createApp } from '../../api/app';
import { apiKeyFor } from '../support/accounts';
import { freePort } from '../../scripts/infra/processes';
import { startFerretDb } from '../../scripts/infra/servers';

export interface BenchStack {
  /** The real app, without response validation or access logs, as production runs it. */
  app: Express;
  workspaceId: string;
  /** An API key of the workspace whose limit never refuses a measured request. */
  key: string;
  /** The processes a request runs in, by role (this process serves the API), for cpuSampler. */
  roles: Record<string, number[]>;
  /** Listens on a free port and answers the base URL; stop() closes it. */
  listen(app: Express): Promise<string>;
  stop(): Promise<void>;
}

/**
 * What every API benchmark stands on: a FerretDB of its own (fast pragmas), an active
 * workspace on `plan` with a key, and the real app. No Temporal: no measured route uses it.
 */
export async function startBenchStack(plan: string, options: { timeStoreCommands?: boolean } = {}): Promise<BenchStack> {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-bench-'));
  const ferret = await startFerretDb({
    port: await freePort(),
    dataDir: path.join(tempDir, 'ferretdb'),
    fast: true,
    output: { file: path.join(tempDir, 'ferretdb.log') },
  });
  const servers: Server[] = [];
  // The driver's command monitoring (timeStoreCommands) costs every command some CPU: only the
  // benches that split a request into the store's time and ours turn it on; production runs without.
  // Stored secrets (webhook endpoints' signing secrets) are sealed as the services seal them (0196).
  useTestDataKeys();
  await connectMongo(ferret.uri('bench'), { monitorCommands: options.timeStoreCommands === true });
  const workspaceId = newId();
  const now = new Date();
  await Workspace.create({ _id: workspaceId, name: 'bench', status: 'active', plan, created_by: newId(), created_at: now, updated_at: now });
  const { key } = await apiKeyFor(workspaceId, 'bench', 1_000_000);
  const app = createApp({
    config: {
      defaultTimezone: 'Asia/Kolkata',
      validateResponses: false,
      roundTripWaitMs: 30_000,
      auth: { secret: 'bench-secret-that-is-at-least-32-characters-long', sessionTtlSeconds: 3600, passwordHashLogN: 12 },
      welcomeCreditsPaise: 0,
      toolsAllowPrivateNetworks: false,
    },
    temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    logger: { info: () => undefined, error: () => undefined },
    // The bench's thousands of sign-in requests all come from 127.0.0.1.
    addressLimits: GENEROUS_ADDRESS_LIMITS,
  });
  return {
    app,
    workspaceId,
    key,
    roles: { api: [process.pid], ferretdb: [ferret.child.pid as number] },
    async listen(target) {
      const server = await new Promise<Server>((resolve) => {
        const s = target.listen(0, '127.0.0.1', () => resolve(s));
      });
      servers.push(server);
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async stop() {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      await disconnectMongo();
      await ferret.stop();
      fs.rmSync(tempDir, { recursive: true, force: true });
    },
  };
}
