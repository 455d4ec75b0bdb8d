import express from 'express';
import { expect } from 'chai';
import { startApi, type RunningApi } from '../support/api';
import { activeOwner, apiKeyFor, oauthTokenFor, type SignedUp } from '../support/accounts';

/**
 * The HTTP surface as an outside OpenAPI fuzzer (schemathesis, `npm run test:fuzz`) probes it
 * (issue 16, item 4): malformed bodies, methods a path does not have, media types, time
 * zones, the workspace header and mixed credentials, over real HTTP.
 */
describe('the HTTP surface under a fuzzer', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi({
      extraRoutes: (app) => {
        // A library's own 5xx: body-parser refuses a stream whose encoding was set (500 stream.encoding.set).
        app.post('/__test/encoded-stream', (req, res, next) => {
          req.setEncoding('utf8');
          express.json({ type: () => true })(req, res, next);
        });
      },
    });
    owner = await activeOwner(api);
  });
  after(() => api.close());

  describe('malformed bodies', () => {
    const boundary = 'fuzzboundary';
    const multipart = (body: string, contentType = `multipart/form-data; boundary=${boundary}`) =>
      api.request('/api/v1/kyc/documents', { method: 'POST', headers: { ...owner.auth, 'Content-Type': contentType }, body });

    it('a multipart body with a malformed part header is 400 naming the problem, not a 500', async () => {
      const res = await multipart(`--${boundary}\r\nContent-Disposition form-data; name="file"\r\n\r\n%PDF-1.4\r\n--${boundary}--\r\n`);
      expect(res.status).to.equal(400);
      const { detail } = await res.json();
      expect(detail).to.include('multipart body cannot be read').and.include('Malformed part header').and.include('"file"');
    });

    it('a multipart body cut short, or without a boundary, is 400 too', async () => {
      const cut = await multipart(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4`);
      expect(cut.status).to.equal(400);
      const noBoundary = await multipart('whatever', 'multipart/form-data');
      expect(noBoundary.status).to.equal(400);
      expect((await noBoundary.json()).detail).to.include('multipart body cannot be read');
    });

    it('a 5xx raised by a library is the contract 500, with the request id', async () => {
      const res = await api.request('/__test/encoded-stream', {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', 'X-Request-ID': 'encoded-1' },
        body: '{}',
      });
      expect(res.status).to.equal(500);
      expect(await res.json()).to.deep.equal({ detail: 'internal server error', request_id: 'encoded-1' });
    });
  });

  describe('405', () => {
    it('names the methods the path has in Allow (RFC 9110)', async () => {
      const res = await api.request('/api/v1/health', { method: 'DELETE' });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('GET');
      const agents = await api.request('/api/v1/agents', { method: 'PATCH', headers: owner.auth });
      expect(agents.status).to.equal(405);
      expect(agents.headers.get('allow')?.split(', ').sort()).to.deep.equal(['GET', 'POST']);
    });

    it('is what a literal path answers for a method only a templated path has (not that operation run with the literal as its id)', async () => {
      // DELETE /phone-numbers/{number} exists; /phone-numbers/available is its own path (GET only).
      const headers = { ...owner.auth, 'X-Workspace-ID': '0'.repeat(32) }; // a workspace that would be 404
      const res = await api.request('/api/v1/phone-numbers/available', { method: 'DELETE', headers });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('GET');
      const browser = await api.request('/api/v1/calls/browser', { headers });
      expect(browser.status).to.equal(405);
      expect(browser.headers.get('allow')).to.equal('POST');
    });
  });

  describe('415', () => {
    it('without a Content-Type: says none was sent and what the operation takes', async () => {
      const res = await api.request('/api/v1/auth/login', { method: 'POST', body: new TextEncoder().encode('{}') });
      expect(res.status).to.equal(415);
      const { detail } = await res.json();
      expect(detail).to.equal('the request has no Content-Type; send application/json');
    });

    it('with another media type: names it and what the operation takes', async () => {
      const res = await api.request('/api/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: 'a,b' });
      expect(res.status).to.equal(415);
      expect((await res.json()).detail).to.equal('the body\'s media type "text/csv" is not one this operation takes; send application/json');
    });
  });

  describe('time zones are the contract 400, never a 422', () => {
    const health = (query: string, headers: Record<string, string> = {}) => api.request(`/api/v1/health${query}`, { headers });

    it('an empty timezone query parameter', async () => {
      const res = await health('?timezone=');
      expect(res.status).to.equal(400);
      expect((await res.json()).detail)
        .to.include('empty time zone')
        .and.include('IANA');
    });

    it('an unknown X-Timezone header, even when the query parameter is good', async () => {
      const res = await health('?timezone=UTC', { 'X-Timezone': 'Nowhere/Land' });
      expect(res.status).to.equal(400);
      expect((await res.json()).detail).to.include('Nowhere/Land');
    });

    it('an X-Timezone header longer than any zone name, and an empty one', async () => {
      const long = await health('', { 'X-Timezone': 'Z'.repeat(65) });
      expect(long.status).to.equal(400);
      const empty = await health('', { 'X-Timezone': '' });
      expect(empty.status).to.equal(400);
    });

    it('a repeated timezone query parameter', async () => {
      const res = await health('?timezone=UTC&timezone=Asia/Tokyo');
      expect(res.status).to.equal(400);
      expect((await res.json()).detail).to.include('one timezone');
    });

    it('still takes any letter case of a listed zone, and older aliases', async () => {
      const lower = await health('?timezone=asia/tokyo');
      expect(lower.status).to.equal(200);
      expect(lower.headers.get('x-timezone')).to.equal('Asia/Tokyo');
      expect((await health('', { 'X-Timezone': 'Asia/Calcutta' })).status).to.equal(200);
    });

    it('the served document lists the zones it accepts, and /masters the same ones', async () => {
      const doc = await (await api.request('/openapi.json')).json();
      const zones: string[] = doc.components.schemas.TimeZone.enum;
      expect(zones).to.include.members(['Asia/Kolkata', 'UTC', 'Europe/London']);
      expect(zones).not.to.include('Asia/Calcutta');
      const masters = await api.request('/api/v1/masters', { headers: owner.auth });
      expect(masters.status).to.equal(200);
      expect((await masters.json()).timezones.map((z: { id: string }) => z.id)).to.deep.equal(zones);
    });
  });

  describe('X-Workspace-ID', () => {
    it('a malformed one is 400 for a session and an API key alike (keys ignore only a well-formed one)', async () => {
      const key = await apiKeyFor(owner.workspaceId);
      for (const headers of [owner.auth, key.headers]) {
        const res = await api.request('/api/v1/workspace', { headers: { ...headers, 'X-Workspace-ID': 'not-a-workspace' } });
        expect(res.status, JSON.stringify(Object.keys(headers))).to.equal(400);
        expect((await res.json()).detail).to.include('32 hexadecimal');
      }
      const ignored = await api.request('/api/v1/workspace', { headers: { ...key.headers, 'X-Workspace-ID': '0'.repeat(32) } });
      expect(ignored.status).to.equal(200);
    });
  });

  describe('credentials', () => {
    it('a good session token with a wrong, malformed or empty X-API-Key is 401', async () => {
      for (const value of ['vak_not-a-real-key', 'hello', '']) {
        const res = await api.request('/api/v1/auth/me', { headers: { ...owner.auth, 'X-API-Key': value } });
        expect(res.status, JSON.stringify(value)).to.equal(401);
        expect(res.headers.get('www-authenticate'), JSON.stringify(value)).to.equal('Bearer error="invalid_token"');
      }
    });

    it('a good X-API-Key with a wrong bearer token is 401', async () => {
      const key = await apiKeyFor(owner.workspaceId);
      for (const authorization of ['Bearer not-a-token', 'Bearer vak_revoked-or-never-issued', 'Basic abc']) {
        const res = await api.request('/api/v1/workspace', { headers: { ...key.headers, Authorization: authorization } });
        expect(res.status, authorization).to.equal(401);
      }
    });

    it('two good credentials are served, the key deciding who acts', async () => {
      const key = await apiKeyFor(owner.workspaceId, 'both');
      const res = await api.request('/api/v1/workspace', { headers: { ...owner.auth, ...key.headers } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-ratelimit-limit'), 'counted as a keyed request').to.equal('120');
    });

    it("with a good key and a good app token, the rate-limit headers are the acting key's", async () => {
      const key = await apiKeyFor(owner.workspaceId, 'beside an app', 77);
      const app = await oauthTokenFor(owner.workspaceId, owner.userId);
      for (let i = 0; i < 5; i++) {
        const res = await api.request('/api/v1/workspace', { headers: { ...app.headers, ...key.headers } });
        expect(res.status).to.equal(200);
        expect(res.headers.get('x-ratelimit-limit'), `request ${i}`).to.equal('77');
      }
    });
  });
});
