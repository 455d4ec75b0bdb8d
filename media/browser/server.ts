import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { StreamRegistry } from '../conversation/stream-registry';
import { verifyStreamToken } from '../../domain/calls/stream-token';
import { BrowserAudioStream } from './browser-stream';
import { BROWSER_CALL_PAGE } from './page';

export interface BrowserCallsOptions {
  /** Checks the browser stream tokens (the API's auth secret, which signs them). */
  secret: string;
  registry: StreamRegistry;
}

export interface BrowserCalls {
  /** Stops taking browser streams and closes the open ones; the HTTP server stays up. */
  close(): Promise<void>;
}

const STREAM_PATH = /^\/browser\/calls\/([^/]+)$/;
/** A page frame is 20 ms of audio (a few hundred bytes of JSON); anything near this is not the page. */
const MAX_FRAME_BYTES = 64 * 1024;

/**
 * Browser calls on a media node's HTTP server: the WebSocket upgrades of
 * `/browser/calls/{call_id}?token=...` (the URL `POST /calls/browser` answered). The token
 * must be a valid browser stream token of that very call (else 401, no WebSocket); the
 * stream then goes to the registry, where the call's conversation takes it.
 *
 * Upgrades of other paths are left alone for the other handlers of the same server (the
 * telephony streams).
 */
export function attachBrowserCalls(server: Server, options: BrowserCallsOptions): BrowserCalls {
  const { secret, registry } = options;
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://media-node');
    const match = STREAM_PATH.exec(url.pathname);
    if (!match) return;
    // The socket is ours from here; a peer that resets it must not throw.
    socket.on('error', () => socket.destroy());
    const callId = decodeURIComponent(match[1]!);
    void verifyStreamToken(secret, url.searchParams.get('token') ?? '', 'browser').then((tokenCallId) => {
      if (tokenCallId === null || tokenCallId !== callId) return refuse(socket, 401, 'Unauthorized');
      sockets.handleUpgrade(req, socket, head, (ws) => registry.offer(callId, new BrowserAudioStream(ws)));
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

/**
 * Serves the browser call page at `GET /browser` (its query names the call and the token;
 * the page itself holds nothing secret). Answers whether the request was the page's.
 */
export function serveBrowserPage(req: IncomingMessage, res: ServerResponse): boolean {
  const path = new URL(req.url ?? '/', 'http://media-node').pathname;
  if (path !== '/browser' && path !== '/browser/') return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'application/json' }).end(JSON.stringify({ detail: 'the browser call page is read with GET' }));
    return true;
  }
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    // The page's token is in its URL: keep it out of Referer headers.
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    // Inline script and style only; the audio worklet is loaded from a blob URL; sockets only to this node.
    'Content-Security-Policy': "default-src 'none'; script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
  });
  res.end(req.method === 'HEAD' ? undefined : BROWSER_CALL_PAGE);
  return true;
}

function refuse(socket: Duplex, status: number, text: string): void {
  if (socket.destroyed) return;
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
