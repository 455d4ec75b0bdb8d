import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { TASK_QUEUES } from '../workflows/shared/task-queues';
import { createConversationActivities } from './conversation/activity';
import { StreamRegistry } from './conversation/stream-registry';
import type { Providers } from '../providers';
import { attachTelephonyStreams } from './telephony/stream-server';
import type { EmbeddingsConfig } from '../config/env';
import { attachBrowserCalls, serveBrowserPage } from './browser/server';

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
}

export interface RunningMediaService {
  url: string;
  publicUrl: string;
  registry: StreamRegistry;
  close(): Promise<void>;
}

/**
 * The media service: an HTTP server for health, the calls' audio WebSockets (telephony
 * streams, browser calls) and the browser call page (`GET /browser`), and a
 * Temporal worker that runs each live conversation as an activity on the `media` queue.
 * Both live in one process so that a conversation finds its call's stream in memory.
 */
export async function startMediaService(options: MediaServiceOptions): Promise<RunningMediaService> {
  const startedAt = new Date().toISOString();
  const registry = new StreamRegistry();
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'ok', service: 'media', started_at: startedAt }));
      return;
    }
    if (serveBrowserPage(req, res)) return;
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ detail: `no route for ${req.method} ${req.url}` }));
  });
  attachTelephonyStreams(server, { secret: options.secret, registry });
  const browserCalls = attachBrowserCalls(server, { secret: options.secret, registry });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  const publicUrl = options.publicUrl ?? url.replace(/^http/, 'ws');

  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: TASK_QUEUES.media,
    activities: createConversationActivities({
      temporal: options.temporal,
      registry,
      mediaNodeUrl: publicUrl,
      languageModelFor: (provider) => options.providers.languageModelFor(provider),
      transcriber: options.providers.transcriber,
      synthesizer: options.providers.synthesizer,
      toolsAllowPrivateNetworks: options.toolsAllowPrivateNetworks,
      embeddings: options.embeddings ?? null,
    }),
    maxConcurrentActivityTaskExecutions: options.maxConversations ?? 200,
    // Cancellation reaches an activity only with a heartbeat's answer: at most a second late
    // (the SDK would otherwise wait 80% of the heartbeat timeout between sends).
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
    // A conversation stops within a second of its cancellation; give it time to save.
    shutdownGraceTime: '10 seconds',
  });
  const running = worker.run();

  return {
    url,
    publicUrl,
    registry,
    close: async () => {
      worker.shutdown();
      await running.catch(() => undefined);
      // Upgraded sockets are no longer the HTTP server's: pages still connected are closed here.
      await browserCalls.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
