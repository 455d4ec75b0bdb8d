import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the target server received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ToolTarget {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  received: ReceivedRequest[];
  /** TCP connections accepted so far (a refused target must not even connect). */
  connections(): number;
  close(): Promise<void>;
}

/**
 * The other end of an HTTP tool: a real HTTP server on 127.0.0.1 with one route per behaviour
 * a tool test meets.
 *
 * - `/echo`: 200 JSON of what arrived (method, path, query, headers, body)
 * - `/status/<code>`: that status with a small JSON body
 * - `/text?size=N`: N characters of `x` as text/plain (default `plain words`)
 * - `/not-json`: labelled application/json but not JSON
 * - `/long-json`: a JSON array far longer than a tool result holds
 * - `/redirect`: 302 to `/echo`
 * - `/silent`: never answers
 * - `/stall-body`: sends the status and headers, then never ends the body
 * - `/endless`: 2 MiB of text, then never ends
 */
export async function startToolTarget(): Promise<ToolTarget> {
  const received: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://target');
      const request = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      respond(url, request, res);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  function respond(url: URL, request: ReceivedRequest, res: ServerResponse) {
    const json = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) return json(Number(status[1]), { error: 'boom', status: Number(status[1]) });
    switch (url.pathname) {
      case '/echo':
        return json(200, request);
      case '/text': {
        const size = url.searchParams.get('size');
        return res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end(size ? 'x'.repeat(Number(size)) : 'plain words');
      }
      case '/not-json':
        return res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"half": ');
      case '/long-json':
        return json(
          200,
          Array.from({ length: 200 }, (_, i) => ({ index: i, name: `item number ${i}` })),
        );
      case '/redirect':
        return res.writeHead(302, { Location: `${origin}/echo` }).end('moved');
      case '/silent':
        return; // the socket stays open until the client gives up (or close())
      case '/stall-body':
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        return res.write('the start of a body that never ends');
      case '/endless':
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        return res.write('y'.repeat(2 * 1024 * 1024));
      default:
        return json(404, { error: 'no such route' });
    }
  }

  return {
    origin,
    port,
    received,
    connections: () => connections,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
