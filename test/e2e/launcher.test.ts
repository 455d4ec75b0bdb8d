import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Connection, Client } from '@temporalio/client';
import mongoose from 'mongoose';
import { Probe } from '../../db/models/probe';
import { temporalConnectionOptions } from '../../domain/shared/temporal';
import { payloadEncryption } from '../../domain/shared/payload-encryption';
import { LOCAL_PAYLOAD_KEY_FILE, readLocalPayloadKey } from '../../scripts/infra/local-payload-key';
import { freePort, ROOT, waitForPort } from '../../scripts/infra/processes';
import { createLocal, testServers } from '../support/servers';

/**
 * `npm start`'s launcher, run as a user runs it: the whole stack on free ports with its own
 * data folder; used over HTTP; stopped with Ctrl-C (SIGINT); started again on the same data.
 */
describe('the launcher (npm start)', function () {
  this.timeout(240_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-launcher-'));
  let ports: Record<
    'PORT' | 'MEDIA_PORT' | 'MONGODB_PORT' | 'TEMPORAL_PORT' | 'TEMPORAL_UI_PORT' | 'API_METRICS_PORT' | 'MEDIA_METRICS_PORT' | 'WORKER_METRICS_PORT',
    number
  >;
  let launcher: Launched | undefined;

  before(async () => {
    ports = {
      PORT: await freePort(),
      MEDIA_PORT: await freePort(),
      MONGODB_PORT: await freePort(),
      TEMPORAL_PORT: await freePort(),
      TEMPORAL_UI_PORT: await freePort(),
      // The launcher's defaults are 9464-9466; free ones here, so that runs side by side do not collide.
      API_METRICS_PORT: await freePort(),
      MEDIA_METRICS_PORT: await freePort(),
      WORKER_METRICS_PORT: await freePort(),
    };
  });
  after(async () => {
    if (launcher && launcher.child.exitCode === null) launcher.child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  let probe: { probe_id: string; workflow_id: string };
  let keyBeforeRestart = '';

  it('starts every service, prints the URLs, and serves the API, the media service and the Temporal UI', async () => {
    launcher = await launch(ports, dataDir);
    const api = `http://127.0.0.1:${ports.PORT}`;
    expect(launcher.output()).to.include(`${api}/api/v1`).and.include(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`);

    const health = await fetch(`${api}/api/v1/health`);
    expect(health.status).to.equal(200);
    expect(health.headers.get('x-request-id')).to.match(/^[0-9a-f]{32}$/);
    expect(health.headers.get('x-timezone')).to.equal('Asia/Kolkata');

    const roundTrip = await fetch(`${api}/api/v1/health/roundtrip`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(await signedIn(api)) },
      body: '{"note":"before restart"}',
    });
    expect(roundTrip.status).to.equal(200);
    probe = (await roundTrip.json()) as typeof probe;

    expect((await fetch(`http://127.0.0.1:${ports.MEDIA_PORT}/health`)).status).to.equal(200);

    // Each process's metrics on the port the launcher gave it, printed in its summary (docs/observability.md).
    expect(launcher.output()).to.include(`http://127.0.0.1:${ports.API_METRICS_PORT}/metrics (API)`);
    for (const [port, metric] of [
      [ports.API_METRICS_PORT, 'voice_agents_http_request_duration_seconds'],
      [ports.MEDIA_METRICS_PORT, 'voice_agents_live_calls'],
      [ports.WORKER_METRICS_PORT, 'temporal_worker_task_slots_available'],
    ] as const) {
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status).to.equal(200);
      expect(await metrics.text()).to.include(`# TYPE ${metric} `);
    }
    const ui = await fetch(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}/`);
    expect(ui.status).to.equal(200);
    expect(await ui.text()).to.match(/<html/i);
    // The UI lists the round-trip workflow (through its own HTTP API, as its pages do).
    expect(await uiListsWorkflow(ports.TEMPORAL_UI_PORT, probe.workflow_id)).to.equal('WORKFLOW_EXECUTION_STATUS_COMPLETED');
  });

  it('encrypts Temporal payloads with a key it made in the data folder, and the UI decodes them through the codec server', async () => {
    const keyFile = path.join(dataDir, LOCAL_PAYLOAD_KEY_FILE);
    expect(fs.statSync(keyFile).mode & 0o777).to.equal(0o600);
    keyBeforeRestart = fs.readFileSync(keyFile, 'utf8');
    const codec = `http://127.0.0.1:${ports.PORT}/codec`;
    expect(launcher!.output()).to.include(codec).and.include(keyFile);
    // The dev server's UI was told where to decode (its settings, as its pages read them).
    const settings = (await (await fetch(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string } };
    expect(settings.Codec?.Endpoint).to.equal(codec);

    // Raw, the probe's summary is ciphertext; with the launcher's key, and through the codec server as the UI's page calls it, it reads.
    const summary = async (encrypted: boolean) => {
      const connection = await Connection.connect(
        temporalConnectionOptions(`127.0.0.1:${ports.TEMPORAL_PORT}`, 'default', null, encrypted ? payloadEncryption(readLocalPayloadKey(dataDir)!) : null),
      );
      try {
        return await new Client({ connection }).workflow
          .getHandle(probe.workflow_id)
          .describe()
          .then((d) => d.staticSummary());
      } finally {
        await connection.close();
      }
    };
    expect(await summary(false).catch((err: Error) => err.message)).to.match(/Unknown encoding: binary\/encrypted/);
    expect(await summary(true)).to.equal(`round-trip probe ${probe.probe_id}`);
    const uiOrigin = `http://localhost:${ports.TEMPORAL_UI_PORT}`;
    type Payloads = { payloads: { metadata: Record<string, string>; data: string }[] };
    const [encrypted] = (
      (await (
        await fetch(`${codec}/encode`, {
          method: 'POST',
          headers: { Origin: uiOrigin, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"x"').toString('base64') }],
          }),
        })
      ).json()) as Payloads
    ).payloads;
    const decoded = await fetch(`${codec}/decode`, {
      method: 'POST',
      headers: { Origin: uiOrigin, 'Content-Type': 'application/json', 'X-Namespace': 'default' },
      body: JSON.stringify({ payloads: [encrypted] }),
    });
    expect([decoded.status, decoded.headers.get('access-control-allow-origin')]).to.deep.equal([200, uiOrigin]);
    expect(Buffer.from(((await decoded.json()) as Payloads).payloads[0]!.data, 'base64').toString()).to.equal('"x"');
  });

  it('stops every child on Ctrl-C and exits 0', async () => {
    const code = await launcher!.interrupt();
    expect(code).to.equal(0);
    for (const port of Object.values(ports)) expect(await isListening(port), `port ${port} is released`).to.equal(false);
  });

  it('keeps the data across a restart: the workflow in Temporal and the document in MongoDB', async () => {
    launcher = await launch(ports, dataDir);
    const connection = await Connection.connect({ address: `127.0.0.1:${ports.TEMPORAL_PORT}` });
    const db = await mongoose.createConnection(`mongodb://127.0.0.1:${ports.MONGODB_PORT}/voice_agents`).asPromise();
    try {
      const description = await new Client({ connection }).workflow.getHandle(probe.workflow_id).describe();
      expect(description.status.name).to.equal('COMPLETED');
      const saved = await db.collection('probes').findOne({ _id: probe.probe_id as never });
      expect(saved?.note).to.equal('before restart');
      // The same key, so that the histories of the first run still decrypt.
      expect(fs.readFileSync(path.join(dataDir, LOCAL_PAYLOAD_KEY_FILE), 'utf8')).to.equal(keyBeforeRestart);
    } finally {
      await connection.close();
      await db.close();
    }
    expect(await launcher.interrupt()).to.equal(0);
  });

  it('uses MONGODB_URI and TEMPORAL_ADDRESS when set, and starts no server for them', async () => {
    const external = { MONGODB_URI: testServers().mongodbUri, TEMPORAL_ADDRESS: createLocal().address };
    launcher = await launch(ports, dataDir, external);
    try {
      expect(launcher.output()).not.to.include('starting FerretDB').and.not.to.include('starting the Temporal dev server');
      expect(await isListening(ports.MONGODB_PORT)).to.equal(false);
      expect(await isListening(ports.TEMPORAL_PORT)).to.equal(false);
      const api = `http://127.0.0.1:${ports.PORT}`;
      const res = await fetch(`${api}/api/v1/health/roundtrip`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(await signedIn(api)) },
        body: '{"note":"external"}',
      });
      expect(res.status).to.equal(200);
      const { probe_id } = (await res.json()) as { probe_id: string };
      expect((await Probe.findById(probe_id).lean())?.note, 'written to the configured database').to.equal('external');
    } finally {
      expect(await launcher.interrupt()).to.equal(0);
    }
  });
});

interface Launched {
  child: ChildProcess;
  output(): string;
  /** Sends SIGINT as a terminal's Ctrl-C would and resolves with the exit code. */
  interrupt(): Promise<number | null>;
}

async function launch(ports: Record<string, number>, dataDir: string, external: Record<string, string> = {}): Promise<Launched> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DATA_DIR: dataDir,
    NODE_ENV: 'development',
  };
  delete env.MONGODB_URI;
  delete env.TEMPORAL_ADDRESS;
  Object.assign(env, external);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'launch.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const deadline = Date.now() + 180_000;
  while (!output.includes('Press Ctrl-C to stop.')) {
    if (child.exitCode !== null) throw new Error(`launcher exited early (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`launcher did not come up:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await waitForPort('127.0.0.1', ports.PORT, 10_000);
  return {
    child,
    output: () => output,
    async interrupt() {
      child.kill('SIGINT');
      return exited;
    },
  };
}

/** The workflow's status as the Temporal UI lists it; visibility is eventually consistent. */
async function uiListsWorkflow(uiPort: number, workflowId: string): Promise<string | undefined> {
  const query = encodeURIComponent(`WorkflowId="${workflowId}"`);
  for (let attempt = 0; attempt < 50; attempt++) {
    const res = await fetch(`http://127.0.0.1:${uiPort}/api/v1/namespaces/default/workflows?query=${query}`);
    const { executions = [] } = (await res.json()) as { executions?: { status: string }[] };
    if (executions[0]?.status === 'WORKFLOW_EXECUTION_STATUS_COMPLETED') return executions[0].status;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

async function isListening(port: number): Promise<boolean> {
  try {
    await waitForPort('127.0.0.1', port, 200);
    return true;
  } catch {
    return false;
  }
}

/** The round-trip probe needs a signed-in caller: sign up through the launched API. */
async function signedIn(api: string): Promise<Record<string, string>> {
  const email = `launcher-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`;
  const res = await fetch(`${api}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Launcher Test', email, password: 'launcher password' }),
  });
  if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`);
  return { Authorization: `Bearer ${((await res.json()) as { token: string }).token}` };
}
