import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { Context } from '@temporalio/activity';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { StreamRegistry } from '../../media/conversation/stream-registry';
import { registerMediaNode } from '../../domain/calls/media-nodes';
import { mediaNodeTaskQueue } from '../../contracts/task-queues';
import { attachTelephonyStreams, type TelephonyStreams, type TelephonyStreamsOptions } from '../../media/telephony/stream-server';

/** A media node's HTTP server with the telephony streams on a free loopback port. */
export interface MediaNode {
  /** `ws://127.0.0.1:<port>`, what the conversation activity gives the call's workflow as its media node. */
  url: string;
  server: Server;
  registry: StreamRegistry;
  streams: TelephonyStreams;
  close(): Promise<void>;
}

export async function startMediaNode(options: Omit<TelephonyStreamsOptions, 'registry'> & { registry?: StreamRegistry }): Promise<MediaNode> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  const registry = options.registry ?? new StreamRegistry();
  const streams = attachTelephonyStreams(server, { ...options, registry });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    registry,
    streams,
    close: async () => {
      registry.close();
      await streams.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The provider's end of one stream, driven by hand: what it sent us and what we sent it. */
export interface ProviderEnd {
  socket: WebSocket;
  /** Every JSON frame received from the media node, in order. */
  received: Record<string, unknown>[];
  send(frame: Record<string, unknown>): void;
  /** Sends Plivo's `start` frame for the call. */
  start(providerCallId?: string, streamId?: string): void;
  closed: Promise<number>;
}

/** Opens a stream the way the provider does; rejects with the HTTP status of a refused upgrade. */
export function openProviderEnd(url: string): Promise<ProviderEnd> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const received: Record<string, unknown>[] = [];
    const closed = new Promise<number>((done) => socket.once('close', (code) => done(code)));
    socket.on('message', (data) => received.push(JSON.parse(data.toString()) as Record<string, unknown>));
    socket.once('unexpected-response', (_req, res) => {
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
      socket.terminate();
    });
    socket.on('error', (error) => reject(error));
    socket.once('open', () => {
      const send = (frame: Record<string, unknown>) => socket.send(JSON.stringify(frame));
      const start = (providerCallId = 'provider-call-1', streamId = 'stream-1') =>
        send({
          event: 'start',
          sequenceNumber: 0,
          start: { callId: providerCallId, streamId, accountId: 'MA1', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } },
        });
      resolve({ socket, received, send, start, closed });
    });
  });
}

/**
 * Enters a hand-made media node in the media node directory, as a media service does, so that
 * the API's answers send calls' streams to it (docs/decisions/0165). The call's workflow then
 * runs the conversation on the node's own queue: here a worker whose conversation only holds
 * the call (heartbeating) until it is canceled, for tests that play the conversation's part on
 * the stream themselves. The returned function leaves the directory and stops the worker.
 */
export async function enterDirectory(node: MediaNode, temporal: { connection: NativeConnection; namespace: string }): Promise<() => Promise<void>> {
  const id = `test-${Math.random().toString(16).slice(2)}`;
  const taskQueue = mediaNodeTaskQueue(id);
  const worker = await Worker.create({
    connection: temporal.connection,
    namespace: temporal.namespace,
    taskQueue,
    activities: {
      async runConversation(): Promise<never> {
        const context = Context.current();
        const beats = setInterval(() => context.heartbeat(), 500);
        try {
          await new Promise((_, reject) =>
            context.cancellationSignal.addEventListener('abort', () => reject(context.cancellationSignal.reason as Error), { once: true }),
          );
        } finally {
          clearInterval(beats);
        }
        throw new Error('unreachable');
      },
    },
  });
  const running = worker.run();
  const entry = await registerMediaNode({ id, url: node.url, taskQueue }, () => 0, undefined, 0);
  return async () => {
    await entry.stop();
    worker.shutdown();
    await running;
  };
}
