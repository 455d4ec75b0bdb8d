import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The webhook benchmark's receiver in a process of its own, so that its CPU is counted apart
 * from the worker's: `/hang/...` never answers (the sender's timeout ends the request),
 * anything else answers 200 at once. Every 50 ms it reports to its parent (`process.send`) the
 * requests that arrived since: `[X-Service-Delivery, Date.now() when the body had arrived]`.
 */
export interface ReceiverReady {
  type: 'ready';
  url: string;
}

export interface ReceiverArrivals {
  type: 'arrivals';
  arrivals: [string, number][];
}

function main(): void {
  let pending: [string, number][] = [];
  const server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      const id = req.headers['x-service-delivery'];
      if (typeof id === 'string') pending.push([id, Date.now()]);
      if (req.url?.startsWith('/hang/')) return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 5_000;
  const flush = setInterval(() => {
    if (pending.length === 0) return;
    const arrivals = pending;
    pending = [];
    process.send?.({ type: 'arrivals', arrivals } satisfies ReceiverArrivals);
  }, 50);
  process.on('message', (message: { type: string }) => {
    if (message.type !== 'close') return;
    clearInterval(flush);
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } satisfies ReceiverReady);
  });
}

main();
