import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DATABASE_NAME, languageModelsEnv } from '../../config/env';
import { connectMongo, disconnectMongo } from '../../db/connect';
import { freePort, type ManagedProcess } from '../../scripts/infra/processes';
import { startFerretDb, startTemporalDevServer, waitForNamespace } from '../../scripts/infra/servers';
import { startAppNode, type AppNode, type AppRole } from '../../scripts/infra/app-nodes';
import { startLoadBalancer, type LoadBalancer } from '../../scripts/infra/load-balancer';
import { freeClusterPorts, startTemporalCluster, type TemporalCluster } from '../../scripts/infra/temporal-cluster';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { callWorkflowId } from '../../contracts/calls';
import type { ConversationActivities } from '../../contracts/conversation';
import { startTestProviders, type TestProviders } from './providers';
import { quietTemporalRuntime } from './disposable-servers';
import { TEST_AUTH_CONFIG } from './api';
import { TEST_DATA_KEYS_ENV, useTestDataKeys } from './data-keys';
import { TEST_PAYLOAD_KEYS_ENV, testEncryption } from './payload-keys';

/**
 * The cluster profile for tests and benchmarks, as `npm run start:cluster` runs it: the real
 * Temporal server on PostgreSQL, FerretDB, and API nodes (behind the load balancer), worker
 * nodes and media nodes as real processes (`scripts/infra/app-nodes.ts`), on free ports with
 * everything in a temporary folder. The outside services' simulators run in this process, so
 * a test scripts its callees directly.
 */
export interface ClusterStack {
  tempDir: string;
  mongodbUri: string;
  ferret: ManagedProcess;
  /** The cluster's Temporal (server on PostgreSQL); for `temporal: 'dev'`, the dev server as a one-process stand-in. */
  temporal: TemporalServers;
  /** A client of this process (histories, describe). */
  client: Client;
  providers: TestProviders;
  balancer: LoadBalancer;
  /** The load balancer's base: `<apiUrl>/api/v1/...`. */
  apiUrl: string;
  nodes: AppNode[];
  node(name: string): AppNode;
  /** SIGKILL a node (no shutdown of any kind), resolved once it is gone. */
  kill(name: string): Promise<void>;
  /** Node names by the identity their Temporal workers report (`<pid>@<host>`). */
  identities(): Map<string, string>;
  /** Every process started, for a test's failure output. */
  logFiles(): string[];
  stop(): Promise<void>;
}

/** What the tests use of the Temporal side: its address, its processes, a restart (cluster only). */
export type TemporalServers = Pick<TemporalCluster, 'address' | 'processes' | 'stop'> & Partial<Pick<TemporalCluster, 'restartServer' | 'postgres'>>;

export interface ClusterStackOptions {
  /** `cluster` (default): the Temporal server on PostgreSQL. `dev`: the CLI's dev server (SQLite file), for comparisons. */
  temporal?: 'cluster' | 'dev';
  nodes?: Partial<Record<AppRole, number>>;
  /** Temporal Web UI server too (the launcher's profile); off in tests. */
  ui?: boolean;
  /** Extra variables of every node (e.g. LOG_LEVEL). */
  env?: NodeJS.ProcessEnv;
}

export async function startClusterStack(options: ClusterStackOptions = {}): Promise<ClusterStack> {
  quietTemporalRuntime();
  // This process writes stored secrets too (a load workspace's webhook endpoint), which the
  // nodes open with the same keys (docs/decisions/0196).
  useTestDataKeys();
  const counts = { api: 2, worker: 2, media: 2, ...options.nodes };
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-cluster-'));
  const infrastructure: ManagedProcess[] = [];
  const nodes: AppNode[] = [];
  let temporal: TemporalServers | undefined;
  let providers: TestProviders | undefined;
  let balancer: LoadBalancer | undefined;
  let client: Client | undefined;
  const stop = async () => {
    await balancer?.close();
    await Promise.all(nodes.map((node) => node.process.stop(5_000)));
    await client?.connection.close();
    await disconnectMongo();
    await providers?.close();
    await temporal?.stop();
    await Promise.all(infrastructure.map((proc) => proc.stop()));
    if (!process.env.KEEP_CLUSTER_FILES) fs.rmSync(tempDir, { recursive: true, force: true });
  };
  try {
    const ferret = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(tempDir, 'ferretdb'),
      fast: true,
      output: { file: path.join(tempDir, 'ferretdb.log') },
    });
    infrastructure.push(ferret);
    const mongodbUri = ferret.uri(DATABASE_NAME);
    temporal =
      options.temporal === 'dev'
        ? await startDevServer(tempDir)
        : await startTemporalCluster({
            dataDir: tempDir,
            ports: await freeClusterPorts(),
            postgresPort: await freePort(),
            namespace: 'default',
            fast: true,
            ui: options.ui,
            output: { dir: tempDir },
          });
    await connectMongo(mongodbUri);
    client = new Client({ connection: await Connection.connect({ address: temporal.address, plugins: [testEncryption.plugin] }), namespace: 'default' });
    providers = await startTestProviders({ poolSize: 4, timeoutMs: 10_000 });
    const { telephony, tts, llm, stt } = providers.config;
    const apiPorts = await Promise.all(Array.from({ length: counts.api }, () => freePort()));
    const mediaPorts = await Promise.all(Array.from({ length: counts.media }, () => freePort()));
    const balancerPort = await freePort();
    const apiUrl = `http://127.0.0.1:${balancerPort}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      MONGODB_URI: mongodbUri,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      AUTH_SECRET: TEST_AUTH_CONFIG.secret,
      ...TEST_DATA_KEYS_ENV,
      PASSWORD_HASH_LOG_N: '12',
      PUBLIC_API_URL: `${apiUrl}/api/v1`,
      TELEPHONY_BASE_URL: telephony!.baseUrl,
      PLIVO_AUTH_ID: telephony!.authId,
      PLIVO_AUTH_TOKEN: telephony!.authToken,
      TTS_BASE_URL: tts!.baseUrl,
      TTS_API_KEY: tts!.apiKey,
      ...languageModelsEnv(llm!),
      STT_BASE_URL: stt!.baseUrl,
      STT_API_KEY: stt!.apiKey,
      // Each media node sets its own; the API's is the fallback address of browser calls.
      MEDIA_PUBLIC_URL: `ws://127.0.0.1:${mediaPorts[0]}`,
      // The simulators and the webhook receivers of the tests listen on loopback.
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      TOOLS_ALLOW_PRIVATE_NETWORKS: 'true',
      ...TEST_PAYLOAD_KEYS_ENV,
      ...options.env,
    };
    const start = async (role: AppRole, index: number, port?: number) => {
      nodes.push(await startAppNode({ role, index, host: '127.0.0.1', port, env, output: { file: path.join(tempDir, `${role}-${index}.log`) } }));
    };
    await Promise.all([
      ...apiPorts.map((port, i) => start('api', i + 1, port)),
      ...Array.from({ length: counts.worker }, (_, i) => start('worker', i + 1)),
      ...mediaPorts.map((port, i) => start('media', i + 1, port)),
    ]);
    balancer = await startLoadBalancer({ port: balancerPort, backends: apiPorts.map((port) => ({ host: '127.0.0.1', port })) });
    await untilWorkersPoll(client, counts.worker, counts.media);
    const byName = (name: string) => {
      const node = nodes.find((n) => n.name === name);
      if (!node) throw new Error(`no node ${name}; nodes: ${nodes.map((n) => n.name).join(', ')}`);
      return node;
    };
    return {
      tempDir,
      mongodbUri,
      ferret,
      temporal,
      client,
      providers,
      balancer,
      apiUrl,
      nodes,
      node: byName,
      async kill(name) {
        const node = byName(name);
        node.process.child.kill('SIGKILL');
        await node.process.exited;
      },
      identities: () => new Map(nodes.map((node) => [`${node.process.child.pid}@${os.hostname()}`, node.name])),
      logFiles: () =>
        fs
          .readdirSync(tempDir)
          .filter((file) => file.endsWith('.log'))
          .map((file) => path.join(tempDir, file)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The dev server as `npm start` runs it (a SQLite file), shaped as the cluster's Temporal. */
async function startDevServer(tempDir: string): Promise<TemporalServers> {
  const server = await startTemporalDevServer({
    port: await freePort(),
    uiPort: await freePort(),
    dbFile: path.join(tempDir, 'temporal.db'),
    output: { file: path.join(tempDir, 'temporal-dev.log') },
  });
  await waitForNamespace(server.address, 'default');
  return { address: server.address, processes: () => [server], stop: () => server.stop() };
}

/**
 * Worker nodes bundle the workflow code before they poll (several seconds each): wait until
 * the calls queue has `workers` pollers and the media queue `media` pollers.
 */
async function untilWorkersPoll(client: Client, workers: number, media: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  const pollers = async (taskQueue: string, taskQueueType: 1 | 2) =>
    new Set(
      ((await client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType })).pollers ?? []).map(
        (p) => p.identity,
      ),
    ).size;
  while (Date.now() < deadline) {
    // 1: workflow tasks, 2: activity tasks (temporal.api.enums.v1.TaskQueueType).
    if ((await pollers(TASK_QUEUES.calls, 1)) >= workers && (await pollers(TASK_QUEUES.media, 2)) >= media) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the cluster's workers did not all poll within 120 s (${workers} worker and ${media} media nodes expected)`);
}

/** The media queue's activity (contracts/conversation.ts, ConversationActivities). */
const CONVERSATION_ACTIVITY = 'runConversation' satisfies keyof ConversationActivities;

/**
 * The identity of the worker running (or that ran) the call's conversation, the media queue's
 * activity: which media node the call lives on. A running activity is in the workflow's
 * pending activities; a finished one's start event in the history names its worker.
 */
export async function conversationIdentity(client: Client, callId: string): Promise<string | undefined> {
  const handle = client.workflow.getHandle(callWorkflowId(callId));
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  const running = pending.find((activity) => activity.activityType?.name === CONVERSATION_ACTIVITY && activity.lastWorkerIdentity);
  if (running) return running.lastWorkerIdentity ?? undefined;
  const mediaScheduled = new Set<string>();
  let identity: string | undefined;
  for (const event of (await handle.fetchHistory()).events ?? []) {
    // On the shared media queue, or (docs/decisions/0165) on the answering node's own queue.
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === CONVERSATION_ACTIVITY) mediaScheduled.add(String(event.eventId));
    const started = event.activityTaskStartedEventAttributes;
    if (started && mediaScheduled.has(String(started.scheduledEventId))) identity = started.identity ?? undefined;
  }
  return identity;
}

/**
 * From one read of the call workflow's history: the identities of the workers that completed its
 * workflow tasks, and how many times its conversation activity was scheduled (2 when its first
 * start never ran on its node, docs/decisions/0241).
 */
export async function callHistoryFacts(client: Client, callId: string): Promise<{ workflowTaskIdentities: Set<string>; conversationStarts: number }> {
  const events = (await client.workflow.getHandle(callWorkflowId(callId)).fetchHistory()).events ?? [];
  return {
    workflowTaskIdentities: new Set(
      events.map((event) => event.workflowTaskCompletedEventAttributes?.identity).filter((identity): identity is string => !!identity),
    ),
    conversationStarts: events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === CONVERSATION_ACTIVITY).length,
  };
}
