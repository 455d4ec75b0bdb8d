import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What a simulator does with each request: answer normally after `latencyMs`, answer 500
 * (`failing`), or never answer (`hanging`), so that tests and benchmarks can reproduce a
 * slow, broken or silent provider.
 */
export type SimulatorMode = 'normal' | 'failing' | 'hanging';

export interface SimulatorOptions {
  /** Port to listen on; 0 (the default) takes a free one. */
  port?: number;
  host?: string;
  /** Added before every answer. */
  latencyMs?: number;
}

export interface RunningSimulator {
  /** Base URL, e.g. `http://127.0.0.1:8091`. */
  url: string;
  latencyMs: number;
  mode: SimulatorMode;
  close(): Promise<void>;
}

export type SimulatorHandler = (req: IncomingMessage, url: URL) => { status: number; body: unknown };

/** A loopback HTTP server that answers JSON through `handle`, honouring the mode and latency. */
export async function startSimulatedService(handle: SimulatorHandler, options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const state = { latencyMs: options.latencyMs ?? 0, mode: 'normal' as SimulatorMode };
  const server = http.createServer((req, res) => {
    if (state.mode === 'hanging') return; // the socket stays open until the client gives up
    const url = new URL(req.url ?? '/', 'http://simulator');
    const answer = state.mode === 'failing' ? { status: 500, body: { error: 'simulated provider failure' } } : handle(req, url);
    setTimeout(() => send(res, answer.status, answer.body), state.latencyMs);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    get latencyMs() {
      return state.latencyMs;
    },
    set latencyMs(value: number) {
      state.latencyMs = value;
    },
    get mode() {
      return state.mode;
    },
    set mode(value: SimulatorMode) {
      state.mode = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The user and password of an HTTP Basic `Authorization` header, or null. */
export function basicCredentials(req: IncomingMessage): { user: string; password: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
