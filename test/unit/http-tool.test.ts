import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { runHttpTool } from '../../providers/http-tools/http-tool';
import { startToolTarget, type ToolTarget } from '../support/tool-target';

/**
 * The executor's connection rules that the API cannot show: a name is resolved once, the
 * request connects to the checked address, and Host and the TLS server name stay the tool's.
 */
describe('runHttpTool: connecting to the checked address', () => {
  let target: ToolTarget;
  before(async () => {
    target = await startToolTarget();
  });
  after(() => target.close());

  /** A resolver that answers 127.0.0.1 once and an unroutable address after that. */
  function resolveOnceThenElsewhere() {
    const asked: string[] = [];
    const resolve = async (hostname: string): Promise<LookupAddress[]> => {
      asked.push(hostname);
      return [{ address: asked.length === 1 ? '127.0.0.1' : '10.255.255.1', family: 4 }];
    };
    return { asked, resolve };
  }

  it('resolves the name once, connects to that address, and sends the original Host', async () => {
    const { asked, resolve } = resolveOnceThenElsewhere();
    const result = await runHttpTool(
      { method: 'GET', url: `http://tools.example.test:${target.port}/echo`, timeout_seconds: 2 },
      { q: 1 },
      { allowPrivateNetworks: true, resolve },
    );
    expect(result).to.include({ ok: true, status: 200, error: null });
    expect(asked).to.deep.equal(['tools.example.test']);
    expect(target.received.at(-1)?.headers.host).to.equal(`tools.example.test:${target.port}`);
    expect(result.request.url).to.equal(`http://tools.example.test:${target.port}/echo?q=1`);
  });

  it('keeps the TLS server name (SNI) of the URL while connecting to the checked address', async () => {
    const serverNames: string[] = [];
    // A TLS server that only records the ClientHello's server name, then ends the handshake.
    const server = tls.createServer({
      SNICallback: (name, callback) => {
        serverNames.push(name);
        callback(new Error('no certificate here'));
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const { resolve } = resolveOnceThenElsewhere();
      const result = await runHttpTool({ url: `https://secure.example.test:${port}/hook`, timeout_seconds: 2 }, {}, { allowPrivateNetworks: true, resolve });
      expect(serverNames).to.deep.equal(['secure.example.test']);
      expect(result.error?.kind).to.equal('network');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('refuses a name that resolves to a blocked address before connecting', async () => {
    const before = target.connections();
    const { asked, resolve } = resolveOnceThenElsewhere();
    const result = await runHttpTool({ url: `http://tools.example.test:${target.port}/echo` }, {}, { allowPrivateNetworks: false, resolve });
    expect(result.error).to.deep.equal({
      kind: 'blocked_address',
      message: 'tools.example.test resolves to 127.0.0.1, which is a loopback address; tools may only call public addresses',
    });
    expect(asked).to.have.length(1);
    expect(target.connections()).to.equal(before);
  });

  it('answers a URL it cannot send as invalid_url', async () => {
    for (const url of ['not a url', 'ftp://files.example.com/x', 'file:///etc/passwd']) {
      const result = await runHttpTool({ url }, {}, { allowPrivateNetworks: true });
      expect(result.error?.kind, url).to.equal('invalid_url');
      expect(result).to.include({ ok: false, status: null });
      expect(result.request).to.deep.equal({ method: 'POST', url });
    }
  });

  it('keeps timeout_seconds within 1 to 30 s when given a stored value outside them', async () => {
    const result = await runHttpTool({ url: `${target.origin}/silent`, timeout_seconds: 0.01 }, {}, { allowPrivateNetworks: true });
    expect(result.error).to.deep.equal({ kind: 'timeout', message: 'no complete answer within 1 s' });
    expect(result.latency_ms).to.be.at.least(950);
  });

  it('stops at once when its signal aborts (the caller talked over the reply): canceled, not left to finish', async () => {
    for (const path of ['/silent', '/stall-body']) {
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 150);
      const result = await runHttpTool(
        { url: `${target.origin}${path}`, method: 'GET', timeout_seconds: 5 },
        {},
        { allowPrivateNetworks: true, signal: stop.signal },
      );
      expect(result.error, path).to.deep.equal({ kind: 'canceled', message: 'canceled before the answer was complete' });
      expect(result, path).to.include({ ok: false, status: null });
      expect(result.latency_ms, path).to.be.within(140, 1000);
    }
  });
});
