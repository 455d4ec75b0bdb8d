import { expect } from 'chai';
import { defaultPayloadConverter } from '@temporalio/common';
import { codecServerOpenOnLoopback } from '../../api/codec-server';
import { loadConfig } from '../../config/env';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../domain/shared/payload-encryption';
import { startApi, type RunningApi } from '../support/api';
import { TEST_CODEC_SERVER_TOKEN, TEST_UI_ORIGIN, testCodecServer } from '../support/codec-server';
import { testEncryption } from '../support/payload-keys';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const text = (base64: string) => Buffer.from(base64, 'base64').toString('utf8');
const bearer = { Authorization: `Bearer ${TEST_CODEC_SERVER_TOKEN}` };

/** A payload as the UI sends it: proto3 JSON, bytes in base64. */
function jsonPayload(value: unknown) {
  const payload = defaultPayloadConverter.toPayload(value);
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(payload.data!).toString('base64'),
  };
}

/**
 * The codec server of the Temporal Web UI and CLI (docs/decisions/0201), on the API at /codec:
 * Temporal's codec server protocol, a staff bearer token, CORS for the UI's origin only.
 */
describe('The codec server (/codec/encode, /codec/decode)', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  const post = (target: RunningApi, operation: string, body: unknown, headers: Record<string, string> = bearer) =>
    target.request(`/codec/${operation}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('encodes payloads as the workers do, and decodes them back; plaintext payloads decode as they are', async () => {
    const plain = jsonPayload({ to: '+919812345678' });
    const encoded = await post(api, 'encode', { payloads: [plain] });
    expect(encoded.status).to.equal(200);
    expect(encoded.headers.get('cache-control')).to.equal('no-store');
    const [encrypted] = (await encoded.json()).payloads;
    expect(text(encrypted.metadata.encoding)).to.equal(ENCRYPTED_ENCODING);
    expect(text(encrypted.metadata[KEY_ID_METADATA])).to.equal('test-1');
    expect(text(encrypted.data)).not.to.contain('+919812345678');

    const decoded = await post(api, 'decode', { payloads: [encrypted, plain] });
    expect(decoded.status).to.equal(200);
    expect((await decoded.json()).payloads).to.deep.equal([plain, plain]);

    // A payload the workers wrote (the codec itself) decodes too.
    const [written] = await testEncryption.codec.encode([defaultPayloadConverter.toPayload('Asha Rao')]);
    const fromWorker = {
      metadata: Object.fromEntries(Object.entries(written!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      data: Buffer.from(written!.data!).toString('base64'),
    };
    expect(text((await (await post(api, 'decode', { payloads: [fromWorker] })).json()).payloads[0].data)).to.equal('"Asha Rao"');
    expect((await (await post(api, 'decode', {})).json()).payloads).to.deep.equal([]);
  });

  it('refuses callers without the staff token (401), and a wrong one, before reading the body', async () => {
    const body = { payloads: [jsonPayload('x')] };
    for (const headers of <Record<string, string>[]>[
      {},
      { Authorization: 'Bearer not-the-token' },
      { Authorization: TEST_CODEC_SERVER_TOKEN },
      { Authorization: `Basic ${b64(`staff:${TEST_CODEC_SERVER_TOKEN}`)}` },
    ]) {
      const res = await post(api, 'decode', body, headers);
      expect(res.status, JSON.stringify(headers)).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
      expect((await res.json()).detail).to.contain('CODEC_SERVER_TOKEN');
    }
    expect((await post(api, 'decode', '{not json', {})).status).to.equal(401);
  });

  it('answers the UI origin’s preflight and its requests with CORS headers; other origins are refused', async () => {
    const preflight = await api.request('/codec/decode', {
      method: 'OPTIONS',
      headers: { Origin: TEST_UI_ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,x-namespace' },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(TEST_UI_ORIGIN);
    expect(preflight.headers.get('access-control-allow-methods')).to.contain('POST');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase())
      .to.contain('authorization')
      .and.contain('x-namespace')
      .and.contain('content-type');
    expect(preflight.headers.get('access-control-allow-credentials')).to.equal('true');

    const fromUi = await post(api, 'decode', { payloads: [] }, { ...bearer, Origin: TEST_UI_ORIGIN });
    expect(fromUi.status).to.equal(200);
    expect(fromUi.headers.get('access-control-allow-origin')).to.equal(TEST_UI_ORIGIN);
    expect(fromUi.headers.get('vary')).to.match(/Origin/i);
    // A refusal still reaches the UI's page readably.
    const unauthorised = await post(api, 'decode', { payloads: [] }, { Origin: TEST_UI_ORIGIN });
    expect([unauthorised.status, unauthorised.headers.get('access-control-allow-origin')]).to.deep.equal([401, TEST_UI_ORIGIN]);

    const evil = 'https://evil.example.com';
    const foreignPreflight = await api.request('/codec/decode', { method: 'OPTIONS', headers: { Origin: evil, 'Access-Control-Request-Method': 'POST' } });
    expect(foreignPreflight.status).to.equal(403);
    expect(foreignPreflight.headers.get('access-control-allow-origin')).to.equal(null);
    const foreign = await post(api, 'decode', { payloads: [jsonPayload('x')] }, { ...bearer, Origin: evil });
    expect(foreign.status).to.equal(403);
    expect(foreign.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('answers 400 for a body that is not a Payloads message, 422 for a payload of an unknown key', async () => {
    for (const body of [
      [],
      { payloads: {} },
      { payloads: [1] },
      { payloads: [{ metadata: { encoding: 'not base64!' } }] },
      { payloads: [{ data: 42 }] },
      { payloads: [{ metadata: [] }] },
    ]) {
      const res = await post(api, 'decode', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect((await res.json()).detail).to.be.a('string');
    }
    const unknownKey = { metadata: { encoding: b64(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: b64('retired-key') }, data: b64('x'.repeat(40)) };
    const res = await post(api, 'decode', { payloads: [unknownKey] });
    expect(res.status).to.equal(422);
    expect((await res.json()).detail).to.contain('"retired-key"');
    expect((await post(api, 'transcode', { payloads: [] })).status).to.equal(404);
  });

  it('without a token: 503 saying what to set, unless a development API bound to loopback serves this machine', async () => {
    const unconfigured = await startApi({ codecServer: testCodecServer({ token: null }) });
    const open = await startApi({ codecServer: testCodecServer({ token: null, openOnLoopback: true }) });
    try {
      const refused = await post(unconfigured, 'decode', { payloads: [] }, {});
      expect(refused.status).to.equal(503);
      expect((await refused.json()).detail).to.contain('CODEC_SERVER_TOKEN');
      expect((await post(open, 'decode', { payloads: [jsonPayload('x')] }, {})).status).to.equal(200);
    } finally {
      await Promise.all([unconfigured.close(), open.close()]);
    }
    expect(codecServerOpenOnLoopback(loadConfig({ NODE_ENV: 'development' }))).to.equal(true);
    expect(codecServerOpenOnLoopback(loadConfig({ NODE_ENV: 'development', HOST: '0.0.0.0' }))).to.equal(false);
    expect(codecServerOpenOnLoopback(loadConfig({ NODE_ENV: 'development', CODEC_SERVER_TOKEN: TEST_CODEC_SERVER_TOKEN }))).to.equal(false);
    expect(codecServerOpenOnLoopback(loadConfig({ NODE_ENV: 'test' }))).to.equal(false);
  });

  it('reads CODEC_SERVER_TOKEN and TEMPORAL_UI_ORIGIN', () => {
    expect(
      loadConfig({ CODEC_SERVER_TOKEN: TEST_CODEC_SERVER_TOKEN, TEMPORAL_UI_ORIGIN: 'http://localhost:8233, https://Temporal.example.com' }).codecServer,
    ).to.deep.equal({ token: TEST_CODEC_SERVER_TOKEN, uiOrigins: ['http://localhost:8233', 'https://temporal.example.com'] });
    expect(() => loadConfig({ CODEC_SERVER_TOKEN: 'short' })).to.throw('at least 32 characters');
    expect(() => loadConfig({ TEMPORAL_UI_ORIGIN: 'http://localhost:8233/namespaces' })).to.throw('no path');
  });
});
