import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The cluster profile's load balancer in front of the API nodes: round robin over the nodes
 * that accept connections, as a cloud load balancer with passive health checks would be.
 *
 * - A node that refuses the connection has not seen the request: it is marked down for a
 *   moment and the request goes to the next node, so a dead node costs clients nothing.
 * - A node that dies while it holds a request may have acted on it: the request is replayed
 *   only when its method is safe (GET, HEAD, OPTIONS); anything else is answered 503 with
 *   `Retry-After`, the retriable error the client then sees.
 */
export interface Backend {
  host: string;
  port: number;
}

export interface LoadBalancer {
  url: string;
  port: number;
  /** Requests each backend answered (by `host:port`), for tests that check the spread. */
  served: Map<string, number>;
  close(): Promise<void>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How long a connection to a backend is kept idle: under the API nodes' keep-alive (65 s) and Node's default (5 s). */
const IDLE_FOR_MS = 4_000;
/** How long a backend that refused a connection is skipped. */
const DOWN_FOR_MS = 2_000;
/** How long a client's idle connection is kept: AWS's load balancers keep theirs 60 s. */
const CLIENT_IDLE_FOR_MS = 60_000;
/**
 * Headers about one connection, not the message (RFC 9110 §7.6.1): a proxy drops them both
 * ways. Forwarding a node's `Keep-Alive: timeout=65` told clients to keep a connection longer
 * than this balancer kept it, the same race 0236 removed between balancer and node.
 */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade'];

export async function startLoadBalancer(options: { host?: string; port: number; backends: Backend[] }): Promise<LoadBalancer> {
  const host = options.host ?? '127.0.0.1';
  // An idle connection is dropped after IDLE_FOR_MS, before the node closes it (Node's agent does
  // not heed the node's Keep-Alive hint): a request sent on a connection the node is closing is
  // lost, and a lost POST is answered 503 (decision 0236).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256, timeout: IDLE_FOR_MS });
  const downUntil = new Map<string, number>();
  const served = new Map<string, number>();
  const key = (backend: Backend) => `${backend.host}:${backend.port}`;
  let next = 0;

  /** Backends in round-robin order, those not marked down first. */
  const candidates = (): Backend[] => {
    const start = next++ % options.backends.length;
    const ordered = [...options.backends.slice(start), ...options.backends.slice(0, start)];
    const now = Date.now();
    return [...ordered.filter((b) => (downUntil.get(key(b)) ?? 0) <= now), ...ordered.filter((b) => (downUntil.get(key(b)) ?? 0) > now)];
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void forward(req, res, Buffer.concat(chunks), candidates()));
  });

  const forward = async (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, backends: Backend[]): Promise<void> => {
    for (const backend of backends) {
      const outcome = await attempt(req, res, body, backend);
      if (outcome === 'answered') {
        served.set(key(backend), (served.get(key(backend)) ?? 0) + 1);
        return;
      }
      if (outcome === 'refused') {
        downUntil.set(key(backend), Date.now() + DOWN_FOR_MS);
        continue;
      }
      // Lost mid-request: replay only what cannot have changed anything.
      if (!SAFE_METHODS.has(req.method ?? '')) break;
    }
    if (!res.headersSent) {
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
      res.end(JSON.stringify({ detail: 'the API node handling this request went away; retry' }));
    } else {
      res.destroy();
    }
  };

  const attempt = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, backend: Backend) =>
    new Promise<'answered' | 'refused' | 'lost'>((resolve) => {
      const headers = { ...endToEnd(req.headers), 'x-forwarded-for': req.socket.remoteAddress ?? '', 'content-length': String(body.length) };
      const upstream = http.request({ host: backend.host, port: backend.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.on('end', () => resolve('answered'));
        // The node died while answering: the client sees a cut response, a network error it retries.
        answer.on('error', () => {
          res.destroy();
          resolve('answered');
        });
      });
      upstream.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : 'lost'));
      upstream.end(body);
    });

  // Clients are told this (Node's own `Keep-Alive: timeout=60`) and close before it.
  server.keepAliveTimeout = CLIENT_IDLE_FOR_MS;
  server.headersTimeout = CLIENT_IDLE_FOR_MS + 1_000;
  await new Promise<void>((resolve) => server.listen(options.port, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    served,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

/** The headers of a message without those about the connection it came on, including any the `Connection` header names. */
function endToEnd(headers: http.IncomingHttpHeaders): http.IncomingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const drop = new Set([...HOP_BY_HOP, ...named]);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !drop.has(name.toLowerCase())));
}
