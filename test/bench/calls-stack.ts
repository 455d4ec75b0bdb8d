import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { systemClock } from '../../activities';
import { connectMongo, disconnectMongo } from '../../activities/db/connect';
import { newId } from '../../activities/db/ids';
import { Workspace } from '../../activities/db/models/workspace';
import { appendLedgerItem } from '../../activities/ledger';
import { createApp } from '../../api/app';
import { createProviders } from '../../media/providers';
import { startLanguageModelSimulator, type LanguageModelSimulator } from '../../media/providers/llm/simulator';
import { startRecognitionSimulator, type RecognitionSimulator } from '../../media/providers/stt/simulator';
import { startTelephonySimulator, type TelephonySimulator } from '../../media/providers/telephony/simulator';
import { startSpeechSimulator, type SpeechSimulator } from '../../media/providers/tts/simulator';
import { startMediaService, type RunningMediaService } from '../../media/service';
import { bundleWorkflows, createWorkers } from '../../workers/bootstrap';
import { apiKeyFor } from '../support/accounts';
import { randomNumbers } from '../support/providers';
import { quietTemporalRuntime, startDisposableServers, type DisposableServers } from '../support/disposable-servers';

const SECRET = 'bench-secret-that-is-at-least-32-characters-long';

/** Everything a call needs, on servers of its own: API, workers, media service, simulators. */
export interface CallsBenchStack {
  baseUrl: string;
  /** Bearer header of an API key of an active Scale workspace with plenty of credits. */
  auth: Record<string, string>;
  workspaceId: string;
  /** A number of the simulated account (the caller ID). */
  fromNumber: string;
  client: Client;
  telephony: TelephonySimulator;
  llm: LanguageModelSimulator;
  speech: SpeechSimulator;
  recognition: RecognitionSimulator;
  media: RunningMediaService;
  servers: DisposableServers;
  stop(): Promise<void>;
}

export async function startCallsBenchStack(options: { concurrencyLimit: number }): Promise<CallsBenchStack> {
  quietTemporalRuntime();
  const servers = await startDisposableServers('vas-bench-calls-');
  await connectMongo(servers.mongodbUri);
  const client = new Client({ connection: await Connection.connect({ address: servers.temporalAddress }), namespace: servers.namespace });
  const connection = await NativeConnection.connect({ address: servers.temporalAddress });
  const pool = randomNumbers(5);
  const telephony = await startTelephonySimulator({ numbers: pool });
  const speech = await startSpeechSimulator();
  const llm = await startLanguageModelSimulator();
  const recognition = await startRecognitionSimulator();
  const providersConfig = {
    telephony: { baseUrl: telephony.url, authId: telephony.authId, authToken: telephony.authToken },
    tts: { baseUrl: speech.url, apiKey: speech.apiKey },
    llm: { baseUrl: llm.url, apiKey: llm.apiKey },
    stt: { baseUrl: recognition.url, apiKey: recognition.apiKey },
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
    deps: { clock: systemClock, temporal: client, webhooksAllowPrivateNetworks: true, telephony: providers.telephony, telephonyCallbackBaseUrl: publicApiUrl, languageModelFor: () => providers.languageModel },
    workflows: { workflowBundle: await bundleWorkflows() },
  });
  const running = Promise.all(workers.map((w) => w.run()));
  const media = await startMediaService({ host: '127.0.0.1', port: 0, secret: SECRET, connection, namespace: servers.namespace, temporal: client, providers, toolsAllowPrivateNetworks: true });

  const workspaceId = newId();
  const now = new Date();
  await Workspace.create({ _id: workspaceId, name: 'bench', status: 'active', plan: 'scale', concurrency_limit: options.concurrencyLimit, created_by: newId(), created_at: now, updated_at: now });
  await appendLedgerItem({ workspaceId, kind: 'grant', amountPaise: 100_000_000, idempotencyKey: `bench:${workspaceId}`, at: now, note: 'bench credits' });
  const { key } = await apiKeyFor(workspaceId, 'bench', 1_000_000);

  return {
    baseUrl,
    auth: { Authorization: `Bearer ${key}` },
    workspaceId,
    fromNumber: pool[0]!,
    client,
    telephony,
    llm,
    speech,
    recognition,
    media,
    servers,
    async stop() {
      await media.close();
      workers.forEach((w) => w.shutdown());
      await running.catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([telephony.close(), speech.close(), llm.close(), recognition.close()]);
      await connection.close();
      await client.connection.close();
      await disconnectMongo();
      await servers.stop();
    },
  };
}

/** POST JSON with the stack's key. */
export async function postJson(stack: CallsBenchStack, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${stack.baseUrl}/api/v1${path}`, { method: 'POST', headers: { ...stack.auth, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
