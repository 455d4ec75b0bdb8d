import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { connectMongo, disconnectMongo } from '../../activities/db/connect';
import { newId } from '../../activities/db/ids';
import { Workspace } from '../../activities/db/models/workspace';
import { createApp } from '../../api/app';
import { apiKeyFor } from '../support/accounts';
import { freePort } from '../../scripts/infra/processes';
import { startFerretDb } from '../../scripts/infra/servers';

export interface AuthBenchResult {
  name: string;
  ok: boolean;
  lines: string[];
}

const REQUESTS = 2000;
const WARM_UP = 200;
/** The goal: authentication plus rate limiting add under 1 ms at the median. */
const TARGET_ADDED_P50_MS = 1;

/**
 * What authenticating and rate-limiting a keyed request costs, on the real app and a real
 * FerretDB of its own (the bench starts both and needs no Temporal).
 *
 * Two requests that run the same middleware and end the same way, a 422 from the OpenAPI
 * validator without touching the database, differ only in the access step:
 * - baseline: `POST /api/v1/auth/login` with an empty body (public: no access step);
 * - keyed: `POST /api/v1/keys` with an empty body and an API key (the key is read, the
 *   request counted in its calendar-minute window, the workspace loaded, the permission
 *   checked; the rate-limit headers are set).
 * The requests alternate, sequentially on one connection, so both see the same machine.
 * The difference of their p50 (and p99) is the added cost. A revocation still takes effect
 * on the next request: every keyed request reads the key document.
 */
export async function authBench(): Promise<AuthBenchResult> {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-bench-'));
  const ferret = await startFerretDb({ port: await freePort(), dataDir: path.join(tempDir, 'ferretdb'), fast: true, output: { file: path.join(tempDir, 'ferretdb.log') } });
  let server: Server | undefined;
  try {
    await connectMongo(ferret.uri('bench'));
    const workspaceId = newId();
    const now = new Date();
    await Workspace.create({ _id: workspaceId, name: 'bench', status: 'active', plan: 'starter', created_by: newId(), created_at: now, updated_at: now });
    const { key } = await apiKeyFor(workspaceId, 'bench', 1_000_000); // measured, never refused
    const app = createApp({
      config: {
        defaultTimezone: 'Asia/Kolkata',
        validateResponses: false,
        roundTripWaitMs: 30_000,
        auth: { secret: 'bench-secret-that-is-at-least-32-characters-long', sessionTtlSeconds: 3600, passwordHashLogN: 12 },
        welcomeCreditsPaise: 0,
        toolsAllowPrivateNetworks: false,
      },
      temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }), // no route measured here uses it
      logger: { info: () => undefined, error: () => undefined },
    });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    const json = { 'Content-Type': 'application/json' };
    const baseline = () => fetch(`${base}/auth/login`, { method: 'POST', headers: json, body: '{}' });
    const keyed = () => fetch(`${base}/keys`, { method: 'POST', headers: { ...json, 'X-API-Key': key }, body: '{}' });

    const plain: number[] = [];
    const withKey: number[] = [];
    for (let i = 0; i < WARM_UP + REQUESTS; i++) {
      const a = await timed(baseline, 422);
      const b = await timed(keyed, 422);
      if (i >= WARM_UP) {
        plain.push(a);
        withKey.push(b);
      }
    }
    const p = (xs: number[], q: number) => percentile(xs, q);
    const addedP50 = p(withKey, 0.5) - p(plain, 0.5);
    const addedP99 = p(withKey, 0.99) - p(plain, 0.99);
    const ms = (x: number) => `${x.toFixed(3)} ms`;
    return {
      name: `API key authentication + rate limit (${REQUESTS} requests each, FerretDB)`,
      ok: addedP50 < TARGET_ADDED_P50_MS,
      lines: [
        `unauthenticated (POST /auth/login, 422): p50 ${ms(p(plain, 0.5))}, p99 ${ms(p(plain, 0.99))}`,
        `keyed           (POST /keys, 422):       p50 ${ms(p(withKey, 0.5))}, p99 ${ms(p(withKey, 0.99))}`,
        `added: p50 ${ms(addedP50)} (target < ${TARGET_ADDED_P50_MS} ms), p99 ${ms(addedP99)}`,
      ],
    };
  } finally {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await disconnectMongo();
    await ferret.stop();
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}

async function timed(request: () => Promise<Response>, status: number): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await request();
  await res.arrayBuffer();
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}`);
  return elapsed;
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
