import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLoadBalancer } from '../../scripts/infra/load-balancer';

/**
 * The cluster profile's load balancer drops a connection to a node once idle for 4 s
 * (docs/decisions/0236), so that it never sends a request on one the node is closing. A node that
 * keeps idle connections 30 s here shows it: two requests 6 s apart reach it on two connections.
 */
describe('The cluster load balancer drops idle connections to its nodes (timing: requests 6 s apart, 4 s idle limit)', function () {
  this.timeout(20_000);

  it('sends a request after 6 s idle on a new connection', async () => {
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
