import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLoadBalancer } from '../../scripts/infra/load-balancer';

/**
 * The cluster profile's load balancer drops a connection to a node once idle for 4 s
 * (docs/decisions/0236), so that it never sends a request on one the node is closing. A node that
 * keeps idle connections 30 s here shows it: two requests 6 s apart reach it on two connections.
 * Its clients are told its own keep-alive (60 s), never a node's, so they do not send on a
 * connection it is closing either.
 */
describe('The cluster load balancer closes idle connections before the other side does', function () {
  this.timeout(20_000);

  it('tells its clients how long it keeps their connections, not what a node said of its own', async () => {
    const node = http.createServer((_req, res) => res.end('{}'));
    node.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const balancer = await startLoadBalancer({ port: 0, backends: [{ host: '127.0.0.1', port: (node.address() as AddressInfo).port }] });
    try {
      const direct = await fetch(`http://127.0.0.1:${(node.address() as AddressInfo).port}/`);
      expect(direct.headers.get('keep-alive')).to.equal('timeout=30');
      const proxied = await fetch(`${balancer.url}/one`, { method: 'POST', body: '{}' });
      expect(proxied.status).to.equal(200);
      expect(proxied.headers.get('keep-alive'), 'a client keeping the connection 30 s would reuse one the balancer closed').to.equal('timeout=60');
    } finally {
      await balancer.close();
      node.closeAllConnections();
      await new Promise<void>((resolve) => node.close(() => resolve()));
    }
  });

  it('sends a request after 6 s idle on a new connection to the node (timing: requests 6 s apart, 4 s idle limit)', async () => {
    const connections = new Set<string>();
    const node = http.createServer((req, res) => {
      connections.add(`${req.socket.remotePort}`);
      res.end('{}');
    });
    node.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const balancer = await startLoadBalancer({ port: 0, backends: [{ host: '127.0.0.1', port: (node.address() as AddressInfo).port }] });
    try {
      expect((await fetch(`${balancer.url}/one`, { method: 'POST', body: '{}' })).status).to.equal(200);
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect((await fetch(`${balancer.url}/two`, { method: 'POST', body: '{}' })).status).to.equal(200);
      expect(connections.size, `connections the node saw: ${connections.size}`).to.equal(2);
    } finally {
      await balancer.close();
      node.closeAllConnections();
      await new Promise<void>((resolve) => node.close(() => resolve()));
    }
  });
});
