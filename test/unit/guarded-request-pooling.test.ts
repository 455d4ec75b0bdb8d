import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { closeConnectionPools, connectionPoolCount, sendGuarded, type GuardOptions } from '../../providers/net/guarded-request';

/**
 * Webhooks reuse connections (issue 18): a keep-alive pool per target and checked address set.
 * The guard must still run on every request: a pooled socket never carries a request whose
 * name the guard now refuses, nor one whose name now resolves elsewhere.
 */
describe('guarded requests with pooled connections', () => {
  let server: Server;
  let port: number;
  const connections: { localAddress: string }[] = [];
  const requests: string[] = [];
  const sockets = new Set<Socket>();

  before(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    server.on('connection', (socket: Socket) => {
      connections.push({ localAddress: socket.localAddress ?? '' });
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    // Every loopback address (127.0.0.1, 127.0.0.2, ...) reaches it.
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => {
    closeConnectionPools();
    connections.length = 0;
    requests.length = 0;
  });
  after(async () => {
    closeConnectionPools();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const resolvingTo =
    (address: string): GuardOptions['resolve'] =>
    async () => [{ address, family: 4 } satisfies LookupAddress];
  const post = (path: string, options: GuardOptions, host = 'hooks.example.test') =>
    sendGuarded(
      {
        method: 'POST',
        url: new URL(`http://${host}:${port}${path}`),
        headers: { 'content-type': 'application/json' },
        body: '{}',
        timeoutMs: 2_000,
        bodyLimitBytes: 1024,
        keepAlive: true,
      },
      options,
    );

  it('reuses one connection for consecutive requests to the same target and address', async () => {
    const options = { allowPrivateNetworks: true, resolve: resolvingTo('127.0.0.1') };
    for (let i = 0; i < 3; i++) expect((await post(`/a${i}`, options)).response?.status).to.equal(200);
    expect(requests).to.deep.equal(['/a0', '/a1', '/a2']);
    expect(connections).to.have.length(1);
    expect(connectionPoolCount()).to.equal(1);
  });

  it('still refuses a private address when a pooled connection to it exists: the guard runs before the pool', async () => {
    expect((await post('/allowed', { allowPrivateNetworks: true, resolve: resolvingTo('127.0.0.1') })).response?.status).to.equal(200);
    const refused = await post('/refused', { allowPrivateNetworks: false, resolve: resolvingTo('127.0.0.1') });
    expect(refused.failure?.kind).to.equal('blocked_address');
    expect(requests).to.deep.equal(['/allowed']);
  });

  it('refuses a name that now resolves to a private address, though its earlier address has a pooled connection (DNS rebinding)', async () => {
    // The earlier answer is "public" for this test (allowed); the new one is a private address.
    expect((await post('/first', { allowPrivateNetworks: true, resolve: resolvingTo('127.0.0.1') })).response?.status).to.equal(200);
    const rebound = await post('/rebound', { allowPrivateNetworks: false, resolve: resolvingTo('10.0.0.1') });
    expect(rebound.failure?.kind).to.equal('blocked_address');
    expect(requests).to.deep.equal(['/first']);
  });

  it('connects afresh to the new address when a name resolves elsewhere: a pooled socket serves only the addresses it was checked for', async () => {
    const options = (address: string) => ({ allowPrivateNetworks: true, resolve: resolvingTo(address) });
    expect((await post('/one', options('127.0.0.1'))).response?.status).to.equal(200);
    expect((await post('/two', options('127.0.0.2'))).response?.status).to.equal(200);
    expect(connections.map((c) => c.localAddress)).to.deep.equal(['127.0.0.1', '127.0.0.2']);
    expect(connectionPoolCount()).to.equal(2);
  });

  it('sends a request again on a fresh connection when the target closed the pooled one as it was reused', async () => {
    const options = { allowPrivateNetworks: true, resolve: resolvingTo('127.0.0.1') };
    expect((await post('/before', options)).response?.status).to.equal(200);
    // The target drops its idle keep-alive connections (as a server whose keep-alive ran out).
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = await post('/after', options);
    expect(after.response?.status).to.equal(200);
    expect(requests).to.deep.equal(['/before', '/after']);
  });
});
