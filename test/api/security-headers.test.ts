import { expect } from 'chai';
import { startApi, type ApiResponse, type RunningApi } from '../support/api';

/** Security headers on every kind of answer, HSTS behind a trusted proxy, and CORS (issue 29, item 5; decision 0171). */
describe('security headers and CORS', () => {
  const CONSOLE = 'https://console.example.com';
  let plain: RunningApi;
  let configured: RunningApi;
  before(async () => {
    plain = await startApi();
    configured = await startApi({ corsOrigins: [CONSOLE, 'http://localhost:5173'], trustProxy: ['loopback'] });
  });
  after(async () => {
    await plain.close();
    await configured.close();
  });

  function expectHardened(res: ApiResponse, what: string): void {
    expect(res.headers.get('x-content-type-options'), what).to.equal('nosniff');
    expect(res.headers.get('referrer-policy'), what).to.equal('no-referrer');
    expect(res.headers.get('content-security-policy'), what).to.include("default-src 'none'").and.include("frame-ancestors 'none'");
    expect(res.headers.get('x-powered-by'), what).to.equal(null);
  }

  describe('headers', () => {
    it('on a JSON answer, an error, a 404 and the document', async () => {
      const health = await plain.request('/api/v1/health');
      expect(health.status).to.equal(200);
      expectHardened(health, 'health');
      const unauthorized = await plain.request('/api/v1/agents');
      expect(unauthorized.status).to.equal(401);
      expectHardened(unauthorized, '401');
      const missing = await plain.request('/api/v1/no-such-thing');
      expect(missing.status).to.equal(404);
      expectHardened(missing, '404');
      expectHardened(await plain.request('/openapi.json'), 'document');
    });

    it('on an HTML page (the consent page), with its own restrictive policy', async () => {
      const page = await plain.request('/oauth/authorize?client_id=nobody');
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      expectHardened(page, 'consent page');
      expect(page.headers.get('x-frame-options')).to.equal('DENY');
    });

    it('HSTS only over TLS: a trusted proxy saying https, never a plain request nor an untrusted header', async () => {
      const viaProxy = await configured.request('/api/v1/health', { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(viaProxy.headers.get('strict-transport-security')).to.equal('max-age=31536000');
      expect((await configured.request('/api/v1/health')).headers.get('strict-transport-security'), 'plain http').to.equal(null);
      const spoofed = await plain.request('/api/v1/health', { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(spoofed.headers.get('strict-transport-security'), 'no proxy is trusted').to.equal(null);
    });
  });

  describe('CORS on /api', () => {
    const preflight = (api: RunningApi, path: string, origin: string) =>
      api.request(path, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' },
      });

    it('is off by default: no Access-Control-Allow-Origin, and no preflight answered', async () => {
      const res = await plain.request('/api/v1/health', { headers: { Origin: CONSOLE } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
      const pre = await preflight(plain, '/api/v1/agents', CONSOLE);
      expect(pre.status).to.not.equal(204);
      expect(pre.headers.get('access-control-allow-origin')).to.equal(null);
      expect(pre.headers.get('access-control-allow-methods')).to.equal(null);
    });

    it('allows a configured origin, on answers and errors, and answers its preflight', async () => {
      for (const base of ['/api/v1', '/api']) {
        const res = await configured.request(`${base}/health`, { headers: { Origin: CONSOLE } });
        expect(res.headers.get('access-control-allow-origin'), base).to.equal(CONSOLE);
        expect(res.headers.get('vary'), base).to.include('Origin');
        expect(res.headers.get('access-control-expose-headers'), base).to.include('X-Request-ID').and.include('Retry-After');
      }
      const denied = await configured.request('/api/v1/agents', { headers: { Origin: 'http://localhost:5173' } });
      expect(denied.status).to.equal(401);
      expect(denied.headers.get('access-control-allow-origin'), 'a page can read the 401').to.equal('http://localhost:5173');
      const pre = await preflight(configured, '/api/v1/agents', CONSOLE);
      expect(pre.status).to.equal(204);
      expect(pre.headers.get('access-control-allow-origin')).to.equal(CONSOLE);
      expect(pre.headers.get('access-control-allow-methods')).to.include('POST');
      expect(pre.headers.get('access-control-allow-headers')).to.include('Authorization').and.include('X-Workspace-ID');
      expect(pre.headers.get('access-control-allow-credentials')).to.equal(null);
    });

    it('refuses any other origin, and a preflight for a path that is no operation', async () => {
      const res = await configured.request('/api/v1/health', { headers: { Origin: 'https://evil.example.com' } });
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
      const pre = await preflight(configured, '/api/v1/agents', 'https://evil.example.com');
      expect(pre.status).to.not.equal(204);
      expect(pre.headers.get('access-control-allow-origin')).to.equal(null);
      const unknown = await preflight(configured, '/api/v1/Agents', CONSOLE);
      expect(unknown.status).to.equal(404);
      expect(unknown.headers.get('access-control-allow-methods')).to.equal(null);
    });

    it('leaves the OAuth metadata open to any origin, as browser-based MCP clients need', async () => {
      const res = await plain.request('/.well-known/oauth-authorization-server', { headers: { Origin: 'https://any.example.com' } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    });
  });
});
