import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One POST as the receiver got it, with the raw body a signature check needs. */
export interface ReceivedWebhook {
  /** Date.now() when the body had arrived. */
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
}

export interface ReceiverAnswer {
  status?: number;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the sender's timeout ends the request). */
  hang?: boolean;
  headers?: Record<string, string>;
  body?: string;
}

/** Decides the answer to the `index`-th request (0-based, over the receiver's life). */
export type ReceiverBehaviour = (request: ReceivedWebhook, index: number) => ReceiverAnswer;

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  received: ReceivedWebhook[];
  behave(behaviour: ReceiverBehaviour): void;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 standing for a customer's webhook receiver. */
export async function startWebhookReceiver(behaviour: ReceiverBehaviour = () => ({ status: 200 })): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  let current = behaviour;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { at: Date.now(), path: req.url ?? '/', headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8') };
      const answer = current(request, received.length);
      received.push(request);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
      if (answer.hang) return;
      const send = () => {
        res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? 'ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    behave(next) {
      current = next;
    },
    waitForRequests(count, timeoutMs = 30_000) {
      if (received.length >= count) return Promise.resolve(received.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${count} webhook requests arrived within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received.slice());
          },
        });
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
