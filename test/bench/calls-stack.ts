import { randomInt } from 'node:crypto';
import { useTestDataKeys } from '../support/data-keys';
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { systemClock } from '../../activities';
import { connectMongo, disconnectMongo } from '../../db/connect';
import { createApp } from '../../api/app';
import { createProviders } from '../../providers';
import { simulatedLanguageModels } from '../../scripts/infra/simulators';
import type { CalleeScript } from '../../simulators/telephony/simulator';
import { bundleWorkflows, createWorkers, TESTING_WORKFLOWS_PATH } from '../../workers/bootstrap';
import { fundedWorkspace } from '../support/accounts';
import { startMediaProcess } from '../support/media-process';
import { randomNumbers } from '../support/providers';
import { quietTemporalRuntime, startDisposableServers, type DisposableServers } from '../support/disposable-servers';
import type { SimulatorCommand, SimulatorsReady } from './simulators-process';
import type { CalleeSilence } from '../support/callee-silence';
import type { CallerLatency } from '../support/caller-latency';
import type { ProcessRoles } from './cost';
import { testEncryption } from '../support/payload-keys';

const SECRET = 'bench-secret-that-is-at-least-32-characters-long';

/** The simulators' process, driven over IPC. */
export interface SimulatorControl {
  setCallees(numbers: string[], script: CalleeScript): Promise<void>;
  configure(settings: Omit<Extract<SimulatorCommand, { type: 'configure' }>, 'type'>): Promise<void>;
  /** The callee's silence after answering, per call to these numbers (null: never answered). */
  silences(numbers: string[]): Promise<(CalleeSilence | null)[]>;
  /** What each number's callee heard: voice-to-voice per line and the greeting (caller-latency.ts), and its silence after the answer. */
  latencies(numbers: string[]): Promise<((CallerLatency & { silence: CalleeSilence | null }) | null)[]>;
  /** Streamed model requests (conversation replies) so far. */
  modelRequests(): Promise<number>;
}

/**
 * Calls end to end, each part in its own process as deployed: this process runs the API and
 * the workers (calls, webhooks, analytics); the media service (`media/server.ts`) and the
 * outside services' simulators run in their own. On servers of their own.
 */
export interface CallsBenchStack {
  baseUrl: string;
  /** Bearer header of an API key of an active Scale workspace with plenty of credits. */
  auth: Record<string, string>;
  workspaceId: string;
  /** A number of the simulated account (the caller ID). */
  fromNumber: string;
  /** Another number of the simulated account, free for a second workspace of the bench. */
  spareNumber: string;
  client: Client;
  simulators: SimulatorControl;
  servers: DisposableServers;
  /** Process ids by role, for the CPU each costs (cost.ts). */
  roles: ProcessRoles;
  /** One more media node (a process of its own) with these settings, in the directory beside the first until stopped. */
  startMedia(env: Record<string, string>): Promise<{ stop(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function startCallsBenchStack(options: { concurrencyLimit: number }): Promise<CallsBenchStack> {
  quietTemporalRuntime();
  const servers = await startDisposableServers('vas-bench-calls-');
  // Stored secrets (webhook endpoints' signing secrets) are sealed as the services seal them (0196).
  useTestDataKeys();
  await connectMongo(servers.mongodbUri);
  const client = new Client({
    connection: await Connection.connect({ address: servers.temporalAddress, plugins: [testEncryption.plugin] }),
    namespace: servers.namespace,
  });
  const connection = await NativeConnection.connect({ address: servers.temporalAddress, plugins: [testEncryption.plugin] });
  const { child: simulatorsProcess, ready, control } = await startSimulatorsProcess(randomNumbers(5));
  const providersConfig = {
    telephony: { baseUrl: ready.telephony.url, authId: ready.telephony.authId, authToken: ready.telephony.authToken },
    tts: { baseUrl: ready.tts.url, apiKey: ready.tts.apiKey },
    llm: simulatedLanguageModels(ready.llm.url, ready.llm.apiKey),
    stt: { baseUrl: ready.stt.url, apiKey: ready.stt.apiKey },
    timeoutMs: 10_000,
  };
  const providers = createProviders(providersConfig);

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const publicApiUrl = `${baseUrl}/api/v1`;
  server.on(
    'request',
    createApp({
      config: {
        defaultTimezone: 'Asia/Kolkata',
        validateResponses: false,
        roundTripWaitMs: 30_000,
        auth: { secret: SECRET, sessionTtlSeconds: 3600, passwordHashLogN: 12 },
        welcomeCreditsPaise: 0,
        providers: providersConfig,
        publicApiUrl,
        toolsAllowPrivateNetworks: true,
      },
      temporal: client,
      logger: { info: () => undefined, error: () => undefined },
    }),
  );
  const workers: Worker[] = await createWorkers({
    connection,
    namespace: servers.namespace,
    roles: ['calls', 'webhooks', 'analytics'],
    deps: {
      clock: systemClock,
      temporal: client,
      webhooksAllowPrivateNetworks: true,
      telephony: providers.telephony,
      telephonyCallbackBaseUrl: publicApiUrl,
      synthesizer: providers.synthesizer,
      languageModelFor: (provider) => providers.languageModelFor(provider),
    },
    workflows: { workflowBundle: await bundleWorkflows(TESTING_WORKFLOWS_PATH) },
  });
  const running = Promise.all(workers.map((w) => w.run()));
  const mediaOptions = {
    mongodbUri: servers.mongodbUri,
    temporalAddress: servers.temporalAddress,
    namespace: servers.namespace,
    authSecret: SECRET,
    providers: providersConfig,
    logFile: path.join(servers.tempDir, 'media.log'),
    nodeEnv: 'production' as const,
  };
  const { process: media } = await startMediaProcess(mediaOptions);
  let extraNodes = 0;

  const { workspaceId, key } = await fundedWorkspace({
    concurrencyLimit: options.concurrencyLimit,
    creditsPaise: 100_000_000,
    callerNumber: ready.pool[0]!,
    name: 'bench',
  });

  return {
    baseUrl,
    auth: { Authorization: `Bearer ${key}` },
    workspaceId,
    fromNumber: ready.pool[0]!,
    spareNumber: ready.pool[1]!,
    client,
    simulators: control,
    servers,
    roles: {
      'api + workers': [process.pid],
      media: [media.child.pid as number],
      temporal: servers.processes.filter((p) => p.name === 'temporal').map((p) => p.child.pid as number),
      ferretdb: servers.processes.filter((p) => p.name === 'ferretdb').map((p) => p.child.pid as number),
      simulators: [simulatorsProcess.pid as number],
    },
    async startMedia(env) {
      const { process: extra } = await startMediaProcess({ ...mediaOptions, env, logFile: path.join(servers.tempDir, `media-${++extraNodes}.log`) });
      return { stop: () => extra.stop() };
    },
    async stop() {
      await media.stop();
      workers.forEach((w) => w.shutdown());
      await running.catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      simulatorsProcess.send({ type: 'close' } satisfies SimulatorCommand);
      await new Promise((resolve) => simulatorsProcess.once('exit', resolve));
      await connection.close();
      await client.connection.close();
      await disconnectMongo();
      await servers.stop();
    },
  };
}

interface SimulatorAnswer {
  silences?: (CalleeSilence | null)[];
  latencies?: ((CallerLatency & { silence: CalleeSilence | null }) | null)[];
  modelRequests?: number;
}

async function startSimulatorsProcess(pool: string[]): Promise<{ child: ChildProcess; ready: SimulatorsReady; control: SimulatorControl }> {
  const child = fork(path.join(__dirname, 'simulators-process.ts'), [], {
    execArgv: ['--require', 'tsx/cjs'],
    env: { ...process.env, SIMULATED_NUMBERS: JSON.stringify(pool) },
  });
  const ready = await new Promise<SimulatorsReady>((resolve, reject) => {
    child.once('message', (message) => resolve(message as SimulatorsReady));
    child.once('exit', (code) => reject(new Error(`the simulators' process exited (${code})`)));
  });
  // One command at a time: each answers `done` once applied.
  let chain: Promise<unknown> = Promise.resolve();
  const send = (command: SimulatorCommand) =>
    (chain = chain.then(
      () =>
        new Promise<SimulatorAnswer>((resolve) => {
          child.once('message', (answer) => resolve(answer as SimulatorAnswer));
          child.send(command);
        }),
    )) as Promise<SimulatorAnswer>;
  return {
    child,
    ready,
    control: {
      setCallees: async (numbers, script) => void (await send({ type: 'callees', numbers, script })),
      configure: async (settings) => void (await send({ type: 'configure', ...settings })),
      silences: async (numbers) => (await send({ type: 'silences', numbers })).silences ?? [],
      latencies: async (numbers) => (await send({ type: 'latencies', numbers })).latencies ?? [],
      modelRequests: async () => (await send({ type: 'modelRequests' })).modelRequests ?? 0,
    },
  };
}

/** POST JSON with the stack's key (or another workspace's). */
export async function postJson(
  stack: CallsBenchStack,
  path: string,
  body: unknown,
  auth: Record<string, string> = stack.auth,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${stack.baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Calling hours that never close, for bench agents. */
export const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };

/** An agent for the bench's calls (open hours, a voice of the simulated speech server), created through the API. */
export async function createAgent(stack: CallsBenchStack, settings: Record<string, unknown>, auth = stack.auth): Promise<string> {
  const { status, json } = await postJson(
    stack,
    '/agents',
    { name: `bench ${randomInt(1e9)}`, voice: { voice_id: 'meera', language: 'en-IN' }, call: OPEN_HOURS, ...settings },
    auth,
  );
  if (status !== 201) throw new Error(`agent create answered ${status}: ${JSON.stringify(json)}`);
  return json.id as string;
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
