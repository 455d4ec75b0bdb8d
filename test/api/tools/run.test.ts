import { expect } from 'chai';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, withJson } from '../../support/accounts';
import { freePort } from '../../../scripts/infra/processes';
import { startToolTarget, type ToolTarget } from '../../support/tool-target';

/**
 * POST /tools/test against a real HTTP server on 127.0.0.1 (private targets allowed, as in
 * tests): the request is sent as a call would send it, and every outcome is a 200 with
 * status, latency, the result cut to 3000 characters, and a typed error.
 */
describe('tool tests: running a tool', () => {
  let api: RunningApi;
  let target: ToolTarget;
  let headers: Record<string, string>;
  before(async () => {
    api = await startApi();
    target = await startToolTarget();
    const owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  after(async () => {
    await api.close();
    await target.close();
  });
  beforeEach(() => {
    target.received.length = 0;
  });

  const tool = (fields: Record<string, unknown>) => ({ name: 'lookup', description: 'Looks something up', ...fields });
  async function run(toolFields: Record<string, unknown>, args?: unknown) {
    const res = await api.request(
      '/api/v1/tools/test',
      withJson('POST', { tool: tool(toolFields), ...(args === undefined ? {} : { arguments: args }) }, headers),
    );
    expect(res.status, await res.clone().text()).to.equal(200);
    return res.json();
  }

  it('GET sends the arguments as query parameters: text as is, objects and arrays as JSON, null left out', async () => {
    const args = { city: 'Pune', count: 3, exact: false, tags: ['a', 'b'], filter: { open: true }, none: null, fixed: 'mine' };
    const result = await run({ method: 'GET', url: `${target.origin}/echo?fixed=tool&keep=1` }, args);
    expect(target.received).to.have.length(1);
    const [request] = target.received;
    expect(request.method).to.equal('GET');
    expect(request.query).to.deep.equal({ fixed: 'mine', keep: '1', city: 'Pune', count: '3', exact: 'false', tags: '["a","b"]', filter: '{"open":true}' });
    expect(request.body).to.equal('');
    expect(request.headers).not.to.have.property('content-type');
    expect(result).to.include({ ok: true, status: 200, truncated: false, location: null, error: null });
    expect(result.request.method).to.equal('GET');
    expect(new URL(result.request.url).searchParams.get('tags')).to.equal('["a","b"]');
    expect(result.result).to.equal(JSON.stringify(JSON.parse(result.result), null, 2)); // laid out with two-space indents
    expect(JSON.parse(result.result).query).to.deep.equal(request.query);
  });

  it('GET with no arguments sends the URL unchanged', async () => {
    const result = await run({ method: 'GET', url: `${target.origin}/echo?a=%20b` });
    expect(result.request.url).to.equal(`${target.origin}/echo?a=%20b`);
    expect(target.received[0].query).to.deep.equal({ a: ' b' });
  });

  it('POST (the default method) sends the arguments as a JSON body', async () => {
    const args = { order_id: 'A-17', quantity: 2, gift: null, items: [{ sku: 'x' }] };
    const result = await run({ url: `${target.origin}/echo` }, args);
    const [request] = target.received;
    expect(request.method).to.equal('POST');
    expect(request.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(request.body)).to.deep.equal(args);
    expect(request.query).to.deep.equal({});
    expect(result).to.include({ ok: true, status: 200, error: null });
    expect(result.request).to.deep.equal({ method: 'POST', url: `${target.origin}/echo` });
  });

  it('POST without arguments sends an empty object', async () => {
    await run({ method: 'POST', url: `${target.origin}/echo` });
    expect(target.received[0].body).to.equal('{}');
  });

  it("sends the tool's extra headers, keeps Host and framing its own, and never echoes headers back", async () => {
    const result = await run(
      {
        url: `${target.origin}/echo`,
        headers: {
          'X-Api-Key': 'secret-key-123',
          Authorization: 'Bearer abc',
          Host: 'evil.example',
          'Content-Length': '1',
          'Content-Type': 'application/vnd.api+json',
        },
      },
      { a: 1 },
    );
    const sent = target.received[0].headers;
    expect(sent).to.include({
      'x-api-key': 'secret-key-123',
      authorization: 'Bearer abc',
      host: `127.0.0.1:${target.port}`,
      'content-length': '7',
      'content-type': 'application/vnd.api+json',
    });
    expect(sent['user-agent']).to.equal('Service-Tools/1.0');
    expect(result.ok).to.equal(true);
    expect(Object.keys(result.request)).to.deep.equal(['method', 'url']);
    expect(JSON.stringify({ ...result, result: '' })).not.to.include('secret-key-123');
  });

  it('answers a header HTTP does not allow as invalid_header, sending nothing', async () => {
    const before = target.connections();
    const result = await run({ url: `${target.origin}/echo`, headers: { 'X-Bad': 'line\r\nInjected: yes' } });
    expect(result.error.kind).to.equal('invalid_header');
    expect(result.error.message).to.include('X-Bad');
    expect(result).to.include({ ok: false, status: null });
    expect(target.connections()).to.equal(before);
  });

  it('abandons a request after timeout_seconds when the server never answers', async () => {
    const result = await run({ url: `${target.origin}/silent`, timeout_seconds: 1 });
    expect(result).to.include({ ok: false, status: null, result: '' });
    expect(result.error).to.deep.equal({ kind: 'timeout', message: 'no complete answer within 1 s' });
    expect(result.latency_ms).to.be.within(950, 2500);
  });

  it('counts the body in the timeout: headers alone do not finish the request', async () => {
    const result = await run({ url: `${target.origin}/stall-body`, timeout_seconds: 1.5 });
    expect(result.error).to.deep.equal({ kind: 'timeout', message: 'no complete answer within 1.5 s' });
    expect(result.latency_ms).to.be.within(1400, 3000);
  });

  it('accepts the longest timeout, 30 s, and answers as soon as the target does', async () => {
    const result = await run({ url: `${target.origin}/echo`, timeout_seconds: 30 });
    expect(result.ok).to.equal(true);
    expect(result.latency_ms).to.be.within(0, 2000);
  });

  it('reports a 500 as http_status with the status and the body', async () => {
    const result = await run({ url: `${target.origin}/status/500` });
    expect(result).to.include({ ok: false, status: 500, location: null });
    expect(result.error).to.deep.equal({ kind: 'http_status', message: 'the server answered 500 Internal Server Error' });
    expect(JSON.parse(result.result)).to.deep.equal({ error: 'boom', status: 500 });
  });

  it('reports 4xx the same way, and treats every 2xx as success', async () => {
    const notFound = await run({ url: `${target.origin}/status/404` });
    expect(notFound).to.include({ ok: false, status: 404 });
    expect(notFound.error.kind).to.equal('http_status');
    const created = await run({ url: `${target.origin}/status/201` });
    expect(created).to.include({ ok: true, status: 201, error: null });
    const lastSuccess = await run({ url: `${target.origin}/status/299` });
    expect(lastSuccess).to.include({ ok: true, status: 299 });
  });

  it('answers text that is not JSON as it came', async () => {
    const text = await run({ method: 'GET', url: `${target.origin}/text` });
    expect(text).to.include({ ok: true, status: 200, result: 'plain words', truncated: false });
    const broken = await run({ method: 'GET', url: `${target.origin}/not-json` });
    expect(broken).to.include({ ok: true, result: '{"half": ' });
  });

  it('does not follow a redirect: it reports the 3xx status and its Location', async () => {
    const result = await run({ method: 'GET', url: `${target.origin}/redirect` });
    expect(result).to.include({ ok: false, status: 302, location: `${target.origin}/echo`, result: 'moved' });
    expect(result.error.kind).to.equal('http_status');
    expect(result.error.message).to.include(`a redirect to ${target.origin}/echo`).and.to.include('not followed');
    expect(target.received.map((r) => r.path)).to.deep.equal(['/redirect']);
  });

  it('cuts a long JSON answer to 3000 characters of its laid-out form', async () => {
    const result = await run({ method: 'GET', url: `${target.origin}/long-json` });
    expect(result).to.include({ ok: true, truncated: true });
    expect(result.result).to.have.length(3000);
    expect(result.result.startsWith('[\n  {\n    "index": 0,\n    "name": "item number 0"\n  },')).to.equal(true);
  });

  it('keeps an answer of exactly 3000 characters whole and cuts one of 3001', async () => {
    const whole = await run({ method: 'GET', url: `${target.origin}/text?size=3000` });
    expect(whole).to.include({ truncated: false, result: 'x'.repeat(3000) });
    const cut = await run({ method: 'GET', url: `${target.origin}/text?size=3001` });
    expect(cut).to.include({ truncated: true, result: 'x'.repeat(3000) });
  });

  it('stops reading a huge answer after 1 MiB instead of waiting for its end', async () => {
    const result = await run({ method: 'GET', url: `${target.origin}/endless`, timeout_seconds: 5 });
    expect(result).to.include({ ok: true, status: 200, truncated: true, error: null });
    expect(result.result).to.equal('y'.repeat(3000));
    expect(result.latency_ms).to.be.below(4000);
  });

  it('reports a host name that does not resolve as a DNS failure', async () => {
    const result = await run({ url: 'http://no-such-tool-host.invalid/hook' });
    expect(result).to.include({ ok: false, status: null });
    expect(result.error.kind).to.equal('dns');
    expect(result.error.message).to.match(/^could not resolve no-such-tool-host\.invalid \((ENOTFOUND|EAI_AGAIN)\)$/);
  });

  it('reports a port where nothing listens as a refused connection', async () => {
    const port = await freePort();
    const result = await run({ url: `http://127.0.0.1:${port}/hook` });
    expect(result).to.include({ ok: false, status: null });
    expect(result.error).to.deep.equal({ kind: 'refused', message: `127.0.0.1:${port} refused the connection (nothing listens there)` });
  });

  it('reports other connection failures as network errors', async () => {
    // TLS spoken to a plain-HTTP server: the handshake fails
    const result = await run({ url: `https://127.0.0.1:${target.port}/echo` });
    expect(result).to.include({ ok: false, status: null });
    expect(result.error.kind).to.equal('network');
    expect(result.error.message).to.include(`the request to 127.0.0.1:${target.port} failed: TLS handshake failed (`);
  });
});
