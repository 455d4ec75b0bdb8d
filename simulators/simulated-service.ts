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

export interface SimulatorAnswer {
  status: number;
  /** JSON; none for an empty answer (204). */
  body?: unknown;
  /** Runs once the answer is written, also when the client gave up waiting (a provider acts on a request it received). */
  afterAnswer?: () => void;
}

/** `body` is the request's body as text (empty for none). */
export type SimulatorHandler = (req: IncomingMessage, url: URL, body: string) => SimulatorAnswer;

/**
 * A loopback HTTP server that answers JSON through `handle`, honouring the mode and latency.
 * `onClose` runs before the server closes (e.g. to stop a simulator's own timers).
 */
export async function startSimulatedService(
  handle: SimulatorHandler,
  options: SimulatorOptions = {},
  onClose?: () => Promise<void>,
): Promise<RunningSimulator> {
  const state = { latencyMs: options.latencyMs ?? 0, mode: 'normal' as SimulatorMode };
  const server = http.createServer((req, res) => {
    if (state.mode === 'hanging') return; // the socket stays open until the client gives up
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? '/', 'http://simulator');
      const answer: SimulatorAnswer = state.mode === 'failing' ? { status: 500, body: { error: 'simulated provider failure' } } : handle(req, url, body);
      setTimeout(() => send(res, answer), state.latencyMs);
    });
  });
  const url = await listenOnLoopback(server, options);
  const close = async () => {
    await onClose?.();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  return withLiveSettings({ url, close }, state, ['latencyMs', 'mode']);
}

/** A request's body as text (the simulators' requests are small). */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    // A client that went away gets no answer; an empty body answers nobody.
    req.on('error', () => resolve(''));
  });
}

function send(res: ServerResponse, answer: SimulatorAnswer): void {
  if (!res.destroyed) {
    if (answer.body === undefined) res.writeHead(answer.status).end();
    else res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body));
  }
  answer.afterAnswer?.();
}

/** The user and password of an HTTP Basic `Authorization` header, or null. */
export function basicCredentials(req: IncomingMessage): { user: string; password: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Listens on the options' port (0: a free one) and host; answers the base URL. */
export async function listenOnLoopback(server: http.Server, options: SimulatorOptions): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return `http://${address}:${port}`;
}

/**
 * Properties that read and write `state` live, so that a test can change a running
 * simulator's settings (`latencyMs`, `mode`, ...) and its handlers see the change at once.
 */
export function withLiveSettings<T extends object, S extends object, K extends keyof S>(target: T, state: S, keys: K[]): T & Pick<S, K> {
  for (const key of keys) {
    Object.defineProperty(target, key, { enumerable: true, get: () => state[key], set: (value: S[K]) => (state[key] = value) });
  }
  return target as T & Pick<S, K>;
}
