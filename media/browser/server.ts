import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { StreamSink } from '../conversation/stream-registry';
import { attachStreamEndpoint, type StreamEndpoint } from '../conversation/stream-endpoint';
import { BrowserAudioStream } from './browser-stream';
import { BROWSER_CALL_PAGE } from './page';

export interface BrowserCallsOptions {
  /** Checks the browser stream tokens (the API's auth secret, which signs them). */
  secret: string;
  registry: StreamSink;
}

export type BrowserCalls = StreamEndpoint;

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
  return attachStreamEndpoint(server, {
    path: STREAM_PATH,
    secret: options.secret,
    kind: 'browser',
    maxPayload: MAX_FRAME_BYTES,
    onStream: (callId, ws) => options.registry.offer(callId, new BrowserAudioStream(ws)),
  });
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
