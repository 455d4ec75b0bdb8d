import type { Server, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { StreamRegistry } from '../conversation/stream-registry';
import { PlivoAudioStream } from './plivo-stream';
import { verifyStreamToken } from '../../domain/calls/stream-token';

export interface TelephonyStreamsOptions {
  /** Signs the stream tokens (the API's auth secret). */
  secret: string;
  registry: StreamRegistry;
  /** How long an opened stream may take to send its `start` frame (default 10 s). */
  startTimeoutMs?: number;
}

export interface TelephonyStreams {
  /** Stops taking streams and closes the open ones; the HTTP server stays up. */
  close(): Promise<void>;
}

const STREAM_PATH = /^\/telephony\/streams\/([^/]+)$/;
const DEFAULT_START_TIMEOUT_MS = 10_000;

/**
 * The telephony provider's audio streams on a media node's HTTP server: the WebSocket
 * upgrades of `/telephony/streams/{call_id}?token=...`, the URL the API's answer XML gave the
 * provider. The token must be a valid stream token of that very call (else 401, no
 * WebSocket). Once the provider's `start` frame arrives the stream is offered to the
 * registry, where the call's conversation takes it.
 *
 * Upgrades of other paths are left alone for other handlers of the same server (a browser
 * call endpoint), so this must not be the only `upgrade` listener that answers them.
 */
export function attachTelephonyStreams(server: Server, options: TelephonyStreamsOptions): TelephonyStreams {
  const { secret, registry } = options;
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const sockets = new WebSocketServer({ noServer: true });

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://media-node');
    const match = STREAM_PATH.exec(url.pathname);
    if (!match) return;
    // The socket is ours from here; a peer that resets it must not throw.
    socket.on('error', () => socket.destroy());
    const callId = decodeURIComponent(match[1]!);
    void verifyStreamToken(secret, url.searchParams.get('token') ?? '').then((tokenCallId) => {
      if (tokenCallId === null || tokenCallId !== callId) return refuse(socket, 401, 'Unauthorized');
      sockets.handleUpgrade(req, socket, head, (ws) => {
        PlivoAudioStream.accept(ws, { timeoutMs: startTimeoutMs }).then(
          (stream) => registry.offer(callId, stream),
          // No start frame: accept has closed the socket; the provider ends the call.
          () => undefined,
        );
      });
    });
  };
  server.on('upgrade', onUpgrade);

  return {
    close: async () => {
      server.off('upgrade', onUpgrade);
      for (const ws of sockets.clients) ws.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

function refuse(socket: Duplex, status: number, text: string): void {
  if (socket.destroyed) return;
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
