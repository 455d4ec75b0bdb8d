import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { streamTokenClaims, type StreamKind } from '../../domain/calls/stream-token';

export interface StreamEndpointOptions {
  /** The upgrade path; its first group is the call id (`/telephony/streams/{call_id}`). */
  path: RegExp;
  /** Checks the stream tokens (the API's auth secret, which signs them). */
  secret: string;
  /** Which stream token the path takes: each kind has its own audience. */
  kind: StreamKind;
  /** The largest frame accepted (ws's default when absent). */
  maxPayload?: number;
  /**
   * The call's WebSocket, once its token is checked: the protocol's stream takes it from here.
   * `agentId`: the call's agent as the token names it (0244), a hint to check against the call.
   */
  onStream(callId: string, ws: WebSocket, agentId: string | null): void;
}

export interface StreamEndpoint {
  /** Stops taking streams and closes the open ones; the HTTP server stays up. */
  close(): Promise<void>;
}

/**
 * A call's audio WebSocket on a media node's HTTP server, the part every stream protocol shares:
 * upgrades of `path` with `?token=...`, where the token must be a valid stream token of that
 * very call (else 401, no WebSocket). Upgrades of other paths are left alone for the other
 * endpoints of the same server, so this must not be the only `upgrade` listener that answers them.
 */
export function attachStreamEndpoint(server: Server, options: StreamEndpointOptions): StreamEndpoint {
  const sockets = new WebSocketServer({ noServer: true, ...(options.maxPayload ? { maxPayload: options.maxPayload } : {}) });

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://media-node');
    const match = options.path.exec(url.pathname);
    if (!match) return;
    // The socket is ours from here; a peer that resets it must not throw.
    socket.on('error', () => socket.destroy());
    const callId = decodeURIComponent(match[1]!);
    const claims = streamTokenClaims(options.secret, url.searchParams.get('token') ?? '', options.kind);
    if (claims === null || claims.callId !== callId) return refuse(socket, 401, 'Unauthorized');
    sockets.handleUpgrade(req, socket, head, (ws) => options.onStream(callId, ws, claims.agentId));
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
