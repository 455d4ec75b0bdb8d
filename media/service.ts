import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { mediaNodeTaskQueue, TASK_QUEUES } from '../contracts/task-queues';
import { transferLegStreamKey } from '../contracts/calls';
import { registerMediaNode } from '../domain/calls/media-nodes';
import { createConversationActivities } from './conversation/activity';
import { ConversationSession } from './conversation/session';
import { StreamRegistry, type StreamSink } from './conversation/stream-registry';
import type { Providers } from '../providers';
import { attachTelephonyStreams } from './telephony/stream-server';
import type { EmbeddingsConfig } from '../config/env';
import { attachBrowserCalls, serveBrowserPage } from './browser/server';
import { GreetingCache } from './conversation/greetings';
import { relayAnswerIfUnclaimed } from './conversation/unclaimed-answer';

export interface MediaServiceOptions {
  host: string;
  /** 0 takes a free port. */
  port: number;
  /** The node's public WebSocket base; default: the address it listens on. */
  publicUrl?: string;
  /** Signs and checks the stream tokens the API hands out (the API's auth secret). */
  secret: string;
  connection: NativeConnection;
  namespace: string;
  temporal: Client;
  providers: Providers;
  toolsAllowPrivateNetworks: boolean;
  /** Knowledge retrieval's embeddings endpoint (Config.embeddings); absent or null ranks by BM25 alone. */
  embeddings?: EmbeddingsConfig | null;
  /** Conversations one node runs at once. */
  maxConversations?: number;
  /** Welcomes prepared and cached (Config.preparedGreetings; default on). */
  preparedGreetings?: boolean;
  /**
   * How long a closing node goes on taking calls once out of the directory (default
   * DIRECTORY_MAX_AGE_MS, while other API nodes may still choose it); 0 when the only API is in
   * this process, which forgets it at once (the tests' stacks).
   */
  directoryLeaveWaitMs?: number;
}

export interface RunningMediaService {
  url: string;
  publicUrl: string;
  /** This node's id in the media node directory, and its own task queue. */
  nodeId: string;
  taskQueue: string;
  /** Warm transfers' second legs, waiting for their conversation. */
  registry: StreamRegistry;
  /** The conversations this node runs, each from its stream's arrival until its activity claims it. */
  sessions: StreamRegistry<ConversationSession>;
  close(): Promise<void>;
}

/** How long a conversation started on its stream waits for its activity before it is closed (and the call with it). */
const KEEP_UNCLAIMED_CONVERSATION_MS = 30_000;

/**
 * The media service: an HTTP server for health, the calls' audio WebSockets (telephony
 * streams, browser calls) and the browser call page (`GET /browser`), and Temporal workers
 * that run each live conversation as an activity: on the node's own queue for the phone calls
 * the API sent here (docs/decisions/0165), on the shared `media` queue for browser calls. All
 * live in one process so that a conversation finds its call's stream in memory. The node
 * enters the media node directory once it takes streams, and leaves it when it closes.
 */
export async function startMediaService(options: MediaServiceOptions): Promise<RunningMediaService> {
  const startedAt = new Date().toISOString();
  const nodeId = randomBytes(8).toString('hex');
  const taskQueue = mediaNodeTaskQueue(nodeId);
  const registry = new StreamRegistry();
  const sessions = new StreamRegistry<ConversationSession>({ keepUnclaimedMs: KEEP_UNCLAIMED_CONVERSATION_MS });
  let liveConversations = 0;
  const sessionDeps = {
    temporal: options.temporal,
    legStreams: registry,
    languageModelFor: (provider: string) => options.providers.languageModelFor(provider),
    transcriber: options.providers.transcriber,
    synthesizer: options.providers.synthesizer,
    toolsAllowPrivateNetworks: options.toolsAllowPrivateNetworks,
    embeddings: options.embeddings ?? null,
    greetings: options.preparedGreetings === false ? null : new GreetingCache(),
  };
  // A call's stream starts its conversation at once; a warm transfer's second leg waits for the conversation that asked for it.
  const streams: StreamSink = {
    offer(key, stream, agentId) {
      const callId = key.endsWith(transferLegStreamKey('')) ? null : key;
      if (callId === null) return registry.offer(key, stream);
      const session = new ConversationSession(callId, stream, sessionDeps, { agentId: agentId ?? null });
      liveConversations++;
      void session.ended.catch(() => undefined).finally(() => liveConversations--);
      sessions.offer(callId, session);
      // A phone call's answer reaches its workflow after the provider has it (0235): relayed from here should it be lost.
      if (stream.providerCallId !== undefined) relayAnswerIfUnclaimed({ temporal: options.temporal, sessions }, session, stream.providerCallId);
    },
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'ok', service: 'media', started_at: startedAt }));
      return;
    }
    if (serveBrowserPage(req, res)) return;
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ detail: `no route for ${req.method} ${req.url}` }));
  });
  attachTelephonyStreams(server, { secret: options.secret, registry: streams });
  const browserCalls = attachBrowserCalls(server, { secret: options.secret, registry: streams });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  const publicUrl = options.publicUrl ?? url.replace(/^http/, 'ws');

  const activities = createConversationActivities({ temporal: options.temporal, sessions, mediaNodeUrl: publicUrl });
  const workerOptions = {
    connection: options.connection,
    namespace: options.namespace,
    activities,
    maxConcurrentActivityTaskExecutions: options.maxConversations ?? 200,
    // Cancellation reaches an activity only with a heartbeat's answer: at most a second late
    // (the SDK would otherwise wait 80% of the heartbeat timeout between sends).
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
    // A conversation stops within a second of its cancellation; give it time to save.
    shutdownGraceTime: '10 seconds',
  } as const;
  // The shared queue (browser calls, calls from before 0165) and this node's own (the phone calls the API sent here).
  const workers = await Promise.all([Worker.create({ ...workerOptions, taskQueue: TASK_QUEUES.media }), Worker.create({ ...workerOptions, taskQueue })]);
  const running = workers.map((worker) => worker.run());
  const directory = await registerMediaNode(
    { id: nodeId, url: publicUrl, taskQueue },
    () => liveConversations,
    (error) => console.error('the media node directory could not be written', error),
    options.directoryLeaveWaitMs,
  );

  return {
    url,
    publicUrl,
    nodeId,
    taskQueue,
    registry,
    sessions,
    close: async () => {
      // No new calls are sent here from now; those under way finish (the workers' grace time).
      await directory.stop();
      for (const worker of workers) worker.shutdown();
      await Promise.all(running.map((run) => run.catch(() => undefined)));
      sessions.close();
      // Upgraded sockets are no longer the HTTP server's: pages still connected are closed here.
      await browserCalls.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
