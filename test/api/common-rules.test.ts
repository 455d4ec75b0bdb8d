import { expect } from 'chai';
import { jsonBody, startApi, type RunningApi } from '../support/api';
import { signUp } from '../support/accounts';

/** The API's common rules (issue: foundation, deliverable 7), over real HTTP. */
describe('API common rules', () => {
  let api: RunningApi;
  /** The round-trip probe needs a signed-in caller. */
  let auth: Record<string, string>;
  const logged: Record<string, unknown>[] = [];
  before(async () => {
    api = await startApi({
      workers: ['ops'],
      logger: { info: (fields) => logged.push(fields), error: (fields) => logged.push(fields) },
      extraRoutes: (app) => {
        app.get('/__test/boom', () => {
          throw new Error('secret internals /srv/app.ts:12');
        });
      },
    });
    auth = (await signUp(api)).auth;
  });
  after(() => api.close());

  describe('base paths', () => {
    for (const base of ['/api/v1', '/api']) {
      it(`serves the routes under ${base}`, async () => {
        const res = await api.request(`${base}/health`);
        expect(res.status).to.equal(200);
        expect((await res.json()).status).to.equal('ok');
      });
    }

    for (const path of ['/openapi.json', '/api/v1/openapi.json', '/api/openapi.json']) {
      it(`serves the OpenAPI 3.1 document version 1.0.0 as JSON at ${path}`, async () => {
        const res = await api.request(path);
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        const doc = await res.json();
        expect(doc.openapi).to.match(/^3\.1\./);
        expect(doc.info.version).to.equal('1.0.0');
        expect(doc.paths).to.have.property('/health');
      });
    }
  });

  describe('X-Request-ID', () => {
    it('is on a success, as 32 hex characters when the caller sent none', async () => {
      const res = await api.request('/api/v1/health');
      expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f]{32}$/);
    });

    it('echoes a safe id the caller sent', async () => {
      const res = await api.request('/api/v1/health', { headers: { 'X-Request-ID': 'req-abc.123' } });
      expect(res.headers.get('x-request-id')).to.equal('req-abc.123');
    });

    it('replaces an id that is unsafe to echo', async () => {
      const res = await api.request('/api/v1/health', { headers: { 'X-Request-ID': 'a b<script>' } });
      expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f]{32}$/);
    });

    it('is in the access log line of the request, with status and latency', async () => {
      await api.request('/api/v1/health?timezone=UTC', { headers: { 'X-Request-ID': 'access-1' } });
      const line = logged.find((e) => e.request_id === 'access-1' && e.msg === 'request');
      expect(line).to.include({ method: 'GET', path: '/api/v1/health', status: 200 });
      expect(line?.duration_ms).to.be.a('number');
    });

    it('is on errors too: 404, 422, 400 and 500', async () => {
      const responses = await Promise.all([
        api.request('/api/v1/nope'),
        api.request('/api/v1/health/roundtrip', jsonBody({ delay_seconds: 99 }, auth)),
        api.request('/api/v1/health?timezone=Mars/Olympus'),
        api.request('/__test/boom'),
      ]);
      expect(responses.map((r) => r.status)).to.deep.equal([404, 422, 400, 500]);
      for (const res of responses) expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f]{32}$/);
    });
  });

  describe('time zones', () => {
    it('defaults to Asia/Kolkata and renders dates with its offset', async () => {
      const res = await api.request('/api/v1/health');
      expect(res.headers.get('x-timezone')).to.equal('Asia/Kolkata');
      expect((await res.json()).checked_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+05:30$/);
    });

    it('takes the X-Timezone header', async () => {
      const res = await api.request('/api/v1/health', { headers: { 'X-Timezone': 'UTC' } });
      expect(res.headers.get('x-timezone')).to.equal('UTC');
      expect((await res.json()).checked_at).to.match(/\+00:00$/);
    });

    it('takes the timezone query parameter over the header', async () => {
      const res = await api.request('/api/v1/health?timezone=America/Sao_Paulo', { headers: { 'X-Timezone': 'UTC' } });
      expect(res.headers.get('x-timezone')).to.equal('America/Sao_Paulo');
      expect((await res.json()).checked_at).to.match(/-03:00$/);
    });

    it('renders the same instant in every zone', async () => {
      const res = await api.request('/api/v1/health/roundtrip?timezone=Asia/Tokyo', jsonBody({}, auth));
      const body = await res.json();
      expect(body.written_at).to.match(/\+09:00$/);
      const utc = await api.request('/api/v1/health?timezone=UTC');
      const now = Date.parse((await utc.json()).checked_at);
      expect(Math.abs(now - Date.parse(body.written_at))).to.be.below(60_000);
    });

    for (const zone of ['Mars/Olympus', '+05:30', 'IST5']) {
      it(`answers 400 naming the unknown zone "${zone}" and asking for an IANA name`, async () => {
        const res = await api.request(`/api/v1/health?timezone=${encodeURIComponent(zone)}`);
        expect(res.status).to.equal(400);
        const body = await res.json();
        expect(body.detail).to.include(zone).and.to.include('IANA');
        expect(res.headers.get('x-timezone')).to.equal('Asia/Kolkata');
      });
    }

    it('answers 400 for an unknown zone in the header too', async () => {
      const res = await api.request('/api/v1/health', { headers: { 'X-Timezone': 'Nowhere/Land' } });
      expect(res.status).to.equal(400);
      expect((await res.json()).detail).to.include('Nowhere/Land');
    });
  });

  describe('validation errors (422)', () => {
    const roundTrip = (body: unknown) => api.request('/api/v1/health/roundtrip', jsonBody(body, auth));

    it('an upper bound exceeded: less_than_equal at body.delay_seconds', async () => {
      const res = await roundTrip({ delay_seconds: 31 });
      expect(res.status).to.equal(422);
      const { detail } = await res.json();
      expect(detail).to.have.length(1);
      expect(detail[0]).to.include({ type: 'less_than_equal', input: 31 });
      expect(detail[0].loc).to.deep.equal(['body', 'delay_seconds']);
      expect(detail[0].msg).to.be.a('string').and.include('30');
    });

    it('a lower bound: greater_than_equal', async () => {
      const { detail } = await (await roundTrip({ delay_seconds: -1 })).json();
      expect(detail[0]).to.deep.include({ type: 'greater_than_equal', loc: ['body', 'delay_seconds'], input: -1 });
    });

    it('a string too long: string_too_long, with 200 characters accepted', async () => {
      const { detail } = await (await roundTrip({ note: 'x'.repeat(201) })).json();
      expect(detail[0]).to.deep.include({ type: 'string_too_long', loc: ['body', 'note'] });
      const ok = await roundTrip({ note: 'x'.repeat(200) });
      expect(ok.status).to.equal(200);
      expect((await ok.json()).note).to.have.length(200);
    });

    it('the wrong type: int_type', async () => {
      const { detail } = await (await roundTrip({ delay_seconds: 'soon' })).json();
      expect(detail[0]).to.deep.include({ type: 'int_type', loc: ['body', 'delay_seconds'], input: 'soon' });
    });

    it('an unknown field: extra_forbidden', async () => {
      const { detail } = await (await roundTrip({ colour: 'blue' })).json();
      expect(detail[0]).to.deep.include({ type: 'extra_forbidden', loc: ['body', 'colour'], input: 'blue' });
    });

    it('reports every failure at once', async () => {
      const { detail } = await (await roundTrip({ delay_seconds: 99, note: 'y'.repeat(300) })).json();
      expect(detail.map((d: { type: string }) => d.type).sort()).to.deep.equal(['less_than_equal', 'string_too_long']);
    });

    it('an out-of-range query parameter is located in the query', async () => {
      const res = await api.request(`/api/v1/health?timezone=${'A'.repeat(65)}`);
      expect(res.status).to.be.oneOf([400, 422]);
    });

    it('malformed JSON: 422 json_invalid at body', async () => {
      const res = await api.request('/api/v1/health/roundtrip', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...auth },
        body: '{"note": ',
      });
      expect(res.status).to.equal(422);
      const { detail } = await res.json();
      expect(detail[0].type).to.equal('json_invalid');
      expect(detail[0].loc).to.deep.equal(['body']);
      expect(detail[0].msg).to.match(/JSON/);
    });
  });

  describe('other errors', () => {
    it('an unknown route under the API is 404 JSON {detail}', async () => {
      const res = await api.request('/api/v1/no/such/route');
      expect(res.status).to.equal(404);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect((await res.json()).detail)
        .to.be.a('string')
        .and.include('/no/such/route');
    });

    it('an unknown route outside the API is 404 JSON {detail}', async () => {
      const res = await api.request('/elsewhere');
      expect(res.status).to.equal(404);
      expect((await res.json()).detail).to.be.a('string');
    });

    it('a method the route does not have is 405 JSON {detail}', async () => {
      const res = await api.request('/api/v1/health', { method: 'DELETE' });
      expect(res.status).to.equal(405);
      expect((await res.json()).detail).to.be.a('string');
    });

    it('a body over 1 MB is 413 JSON {detail}', async () => {
      const res = await api.request('/api/v1/health/roundtrip', jsonBody({ note: 'x'.repeat(1_100_000) }, auth));
      expect(res.status).to.equal(413);
      expect((await res.json()).detail).to.be.a('string');
    });

    it('a body in a media type the operation does not take is 415 JSON {detail}', async () => {
      const res = await api.request('/api/v1/health/roundtrip', { method: 'POST', headers: { 'Content-Type': 'text/plain', ...auth }, body: 'hello' });
      expect(res.status).to.equal(415);
      expect((await res.json()).detail).to.be.a('string');
    });

    it('an uncaught error is 500 with the request id and no stack trace', async () => {
      const res = await api.request('/__test/boom', { headers: { 'X-Request-ID': 'trace-me-1' } });
      expect(res.status).to.equal(500);
      const text = await res.text();
      expect(JSON.parse(text)).to.deep.equal({ detail: 'internal server error', request_id: 'trace-me-1' });
      expect(text).not.to.include('secret internals');
      expect(text).not.to.include('.ts:');
      // ...while the log keeps the stack, under the same id, for whoever investigates.
      const entry = logged.find((e) => e.request_id === 'trace-me-1');
      expect(entry?.error).to.include('secret internals');
    });
  });
});
