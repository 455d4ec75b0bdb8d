import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Module from 'node:module';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import axios, { type AxiosAdapter, type InternalAxiosRequestConfig } from 'axios';
import * as plivo from 'plivo';
import { parseStatusCallback, signPlivoCallback, verifyPlivoCallback, type CallbackParams } from '../../providers/telephony/callbacks';
import { conferenceXml, dialXml, HANGUP_ANSWER_XML, REJECT_ANSWER_XML, streamAnswerXml } from '../../providers/telephony/answer-xml';
import { PlivoTelephony } from '../../providers/telephony/plivo';
import { plivoSignature } from '../../simulators/telephony/plivo-signature';

/**
 * The telephony adapter and simulator held to Plivo's own artefacts (docs/providers.md, "Plivo"):
 * the official `plivo` Node SDK (4.79.0, a devDependency) and Plivo's documentation. Nothing of
 * ours is compared with anything else of ours here.
 */

const AUTH_ID = 'MAODUMMYAUTHID000000';
const AUTH_TOKEN = 'ZGFmNjY0ZDYzMzQ1ZWU5ZDE0ZGRmZTEzM2VkZjc5';

/**
 * Signature V3 as the plivo SDK computes it. The SDK exports only its check
 * (`validateV3Signature`, which cannot hand the signature out), so its own module
 * (`plivo/dist/utils/v3Security.js`) is loaded once more with one export added that calls its
 * internal `construct_get_url`/`construct_post_url` and `get_signature_v3` exactly as
 * `validateV3Signature` does (utf8-encoding the token, nonce and URL first).
 */
function sdkSignature(method: 'GET' | 'POST', url: string, params: CallbackParams, nonce: string): string {
  return sdkInternals().sdkSignature(method, url, nonce, AUTH_TOKEN, params);
}

let internals: { sdkSignature: (method: string, url: string, nonce: string, token: string, params: CallbackParams) => string } | null = null;
function sdkInternals(): NonNullable<typeof internals> {
  if (internals) return internals;
  const file = require.resolve('plivo/dist/utils/v3Security.js');
  const source = `${readFileSync(file, 'utf8')}
exports.sdkSignature = function (method, uri, nonce, authToken, params) {
  uri = utf8.encode(uri);
  var baseUrl = method === 'GET' ? construct_get_url(uri, params) : construct_post_url(uri, params);
  return get_signature_v3(utf8.encode(authToken), baseUrl, utf8.encode(nonce));
};`;
  const loaded = new Module(file) as Module & { _compile(code: string, filename: string): void; paths: string[] };
  loaded.filename = file;
  loaded.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
  loaded._compile(source, file);
  internals = loaded.exports as NonNullable<typeof internals>;
  return internals;
}

const CALLBACK_URLS = [
  ['without a query', 'https://voice.example.in/api/v1/telephony/calls/0123456789abcdef0123456789abcdef/status'],
  ['with a query', 'https://voice.example.in/api/v1/telephony/calls/0123456789abcdef0123456789abcdef/transfer/dial?to=%2B919812345678&timeout=30&limit=600'],
  [
    'with a repeated, unsorted and encoded query',
    'https://voice.example.in:8443/api/v1/telephony/inbound/answer?z=1&a=x+y&a=b%26c&node=wss%3A%2F%2Fmedia.example.in%2F',
  ],
  ['with a trailing slash', 'http://127.0.0.1:3000/api/v1/telephony/inbound/status/'],
] as const;

const CALLBACK_FIELDS: [string, CallbackParams][] = [
  [
    'a hang-up',
    {
      CallUUID: 'c2a1f1b0-0c4e-11ef-9f5e-9b7c1c6f7f10',
      RequestUUID: 'c2a1f1b0-0c4e-11ef-9f5e-9b7c1c6f7f10',
      CallStatus: 'completed',
      Direction: 'outbound',
      From: '918047180001',
      To: '919812345678',
      Duration: '42',
      BillDuration: '60',
      HangupCause: 'NORMAL_CLEARING',
      Event: 'Hangup',
    },
  ],
  ['fields with spaces, symbols and an empty value', { CallStatus: 'ringing', CallerName: 'Asha Rao & Co.', DialBLegUUID: '', SIP_H_X: 'a=b;c' }],
  ['no fields', {}],
];

describe('conformance: Plivo (the official plivo SDK and documentation)', () => {
  describe('signature V3 (plivo `validateV3Signature`, dist/utils/v3Security.js)', () => {
    const nonce = '05429567804466091622';
    for (const [urlKind, url] of CALLBACK_URLS) {
      for (const [fieldsKind, fields] of CALLBACK_FIELDS) {
        it(`the SDK validates the simulator's and the adapter's signatures of a URL ${urlKind}, ${fieldsKind}`, () => {
          const bySimulator = plivoSignature(AUTH_TOKEN, 'POST', url, fields, nonce);
          const byAdapter = signPlivoCallback(AUTH_TOKEN, url, fields, nonce);
          expect(plivo.validateV3Signature('POST', url, nonce, AUTH_TOKEN, bySimulator, fields), 'simulator').to.equal(true);
          expect(plivo.validateV3Signature('POST', url, nonce, AUTH_TOKEN, byAdapter, fields), 'adapter').to.equal(true);
          // And it refuses them for anything else.
          expect(plivo.validateV3Signature('POST', url, `${nonce}1`, AUTH_TOKEN, bySimulator, fields)).to.equal(false);
          expect(plivo.validateV3Signature('POST', `${url}x`, nonce, AUTH_TOKEN, bySimulator, fields)).to.equal(false);
        });

        it(`our verifier accepts the SDK's signature of a URL ${urlKind}, ${fieldsKind}, and only it`, () => {
          const signature = sdkSignature('POST', url, fields, nonce);
          expect(plivo.validateV3Signature('POST', url, nonce, AUTH_TOKEN, signature, fields), 'the helper is the SDK').to.equal(true);
          expect(verifyPlivoCallback({ authToken: AUTH_TOKEN, url, params: fields, nonce, signature })).to.equal(true);
          // As Plivo sends it while the token is rotated: one signature per token.
          expect(
            verifyPlivoCallback({
              authToken: AUTH_TOKEN,
              url,
              params: fields,
              nonce,
              signature: `${sdkSignatureWith('another-token', url, fields, nonce)},${signature}`,
            }),
          ).to.equal(true);
          expect(verifyPlivoCallback({ authToken: AUTH_TOKEN, url, params: { ...fields, Extra: '1' }, nonce, signature })).to.equal(false);
          expect(
            verifyPlivoCallback({
              authToken: AUTH_TOKEN,
              url: url.replace('voice.', 'voices.').replace('127.0.0.1', '127.0.0.2'),
              params: fields,
              nonce,
              signature,
            }),
          ).to.equal(false);
        });
      }
    }

    it("GET: the SDK validates our signatures, ours take the SDK's (fields merged into the query)", () => {
      const [, url] = CALLBACK_URLS[2];
      const fields = { CallStatus: 'ringing', a: '0' };
      expect(plivo.validateV3Signature('GET', url, nonce, AUTH_TOKEN, plivoSignature(AUTH_TOKEN, 'GET', url, fields, nonce), fields)).to.equal(true);
      expect(plivo.validateV3Signature('GET', url, nonce, AUTH_TOKEN, signPlivoCallback(AUTH_TOKEN, url, fields, nonce, 'GET'), fields)).to.equal(true);
      expect(signPlivoCallback(AUTH_TOKEN, url, fields, nonce, 'GET')).to.equal(sdkSignature('GET', url, fields, nonce));
    });

    function sdkSignatureWith(token: string, url: string, fields: CallbackParams, nonce: string): string {
      return sdkInternals().sdkSignature('POST', url, nonce, token, fields);
    }
  });

  describe('answer XML (plivo `Response()`, dist/utils/plivoxml.js)', () => {
    /** The one normalisation: our documents start with the XML declaration, the SDK's `toXML()` has none. */
    const withoutDeclaration = (xml: string) => xml.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n/, '');
    const sdkXml = (build: (response: ReturnType<typeof plivo.Response>) => void): string => {
      const response = plivo.Response();
      build(response);
      return response.toXML() as string;
    };

    it('<Stream>: bidirectional mu-law at 8 kHz, keeping the call alive, its URL escaped', () => {
      const url = 'wss://media.example.in/telephony/streams/0123456789abcdef0123456789abcdef?token=ab.cd&x=1';
      expect(withoutDeclaration(streamAnswerXml(url))).to.equal(
        sdkXml((r) => r.addStream(url, { bidirectional: true, keepCallAlive: true, contentType: 'audio/x-mulaw;rate=8000' })),
      );
    });

    it('<Hangup/> and <Hangup reason="rejected"/>', () => {
      expect(withoutDeclaration(HANGUP_ANSWER_XML)).to.equal(sdkXml((r) => r.addHangup()));
      expect(withoutDeclaration(REJECT_ANSWER_XML)).to.equal(sdkXml((r) => r.addHangup({ reason: 'rejected' })));
    });

    it('<Dial> of one <Number>, with its action, callback, timeout, time limit, caller ID and redirect', () => {
      const options = {
        number: '+919812345678',
        callerId: '+918047180001',
        timeoutSeconds: 30,
        timeLimitSeconds: 600,
        actionUrl: 'https://api.example.in/api/v1/telephony/calls/c/transfer/action?a=1&b=2',
        callbackUrl: 'https://api.example.in/api/v1/telephony/calls/c/transfer/events',
      };
      const expected = sdkXml((r) => {
        const dial = r.addDial({
          action: options.actionUrl,
          method: 'POST',
          callbackUrl: options.callbackUrl,
          callbackMethod: 'POST',
          timeout: 30,
          timeLimit: 600,
          callerId: '918047180001',
          redirect: true,
        });
        dial.addNumber('919812345678');
      });
      expect(withoutDeclaration(dialXml(options))).to.equal(expected);
    });

    it('<Conference>, with and without its callback', () => {
      const attributes = { startConferenceOnEnter: true, endConferenceOnExit: true, waitSound: '', beep: false };
      expect(withoutDeclaration(conferenceXml('call-0123'))).to.equal(sdkXml((r) => r.addConference('call-0123', attributes)));
      expect(withoutDeclaration(conferenceXml('call-0123', { callbackUrl: 'https://api.example.in/c?x=1&y=2' }))).to.equal(
        sdkXml((r) => r.addConference('call-0123', { ...attributes, callbackUrl: 'https://api.example.in/c?x=1&y=2', callbackMethod: 'POST' })),
      );
    });
  });

  describe('CallStatus (docs.plivo.com/docs/voice/xml/request/call-status and the Application callback fields)', () => {
    // The "Call status" page lists seven words; the Application page's callback fields add `failed`.
    const documented = ['in-progress', 'completed', 'ringing', 'no-answer', 'busy', 'cancel', 'timeout', 'failed'];
    for (const word of documented) {
      it(`takes CallStatus=${word}`, () => {
        expect(parseStatusCallback({ CallUUID: 'c', CallStatus: word }), word).to.not.equal(null);
      });
    }
  });

  describe("REST requests (the SDK's, captured at its HTTP adapter, against ours, at a local server)", () => {
    type Sent = { method: string; path: string; query: Record<string, string>; body: unknown };
    let sdkSent: Sent[] = [];
    let ourSent: Sent[] = [];
    let server: http.Server;
    let ours: PlivoTelephony;
    const original = axios.defaults.adapter;
    /** An answer for each request, by method and resource, as Plivo answers (the SDK's and ours alike). */
    const answerTo = (method: string, resource: string): { status: number; body?: unknown } => {
      if (method === 'POST' && resource === 'Call/')
        return { status: 201, body: { api_id: 'a', message: 'call fired', request_uuid: '9834029e-58b6-11e1-b8b7-a5bd0e4e126f' } };
      if (method === 'POST' && resource.startsWith('Call/')) return { status: 202, body: { api_id: 'a', message: 'call transferred' } };
      if (method === 'DELETE' && resource.startsWith('Request/')) return { status: 404, body: { api_id: 'a', error: 'not found' } };
      if (method === 'DELETE') return { status: 204 };
      if (resource === 'Number/')
        return { status: 200, body: { api_id: 'a', meta: { limit: 20, offset: 0, next: null, previous: null, total_count: 0 }, objects: [] } };
      return { status: 200, body: { api_id: 'a', number: '918047180001', region: 'Bangalore, INDIA', number_type: 'local', voice_enabled: true } };
    };
    const account = `/v1/Account/${AUTH_ID}/`;
    const sentOf = (method: string, url: URL, text: string): Sent => ({
      method,
      path: url.pathname,
      query: Object.fromEntries([...url.searchParams].sort()),
      // An empty body and the SDK's `{}` say the same: nothing.
      body: text === '' ? {} : (JSON.parse(text) as unknown),
    });

    before(async () => {
      const capture: AxiosAdapter = async (config: InternalAxiosRequestConfig) => {
        const url = new URL(config.url!);
        const method = (config.method ?? 'get').toUpperCase();
        sdkSent.push(sentOf(method, url, typeof config.data === 'string' ? config.data : ''));
        const answer = answerTo(method, url.pathname.slice(account.length));
        return { data: answer.body ?? '', status: answer.status, statusText: '', headers: {}, config, request: {} };
      };
      axios.defaults.adapter = capture;
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const url = new URL(req.url!, 'http://plivo.local');
          const method = req.method!;
          ourSent.push(sentOf(method, url, Buffer.concat(chunks).toString('utf8')));
          const answer = answerTo(method, url.pathname.slice(account.length));
          if (answer.body === undefined) res.writeHead(answer.status).end();
          else res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      ours = new PlivoTelephony({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        authId: AUTH_ID,
        authToken: AUTH_TOKEN,
        timeoutMs: 5_000,
      });
    });
    after(async () => {
      axios.defaults.adapter = original;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    beforeEach(() => {
      sdkSent = [];
      ourSent = [];
    });
    const sdk = () => new plivo.Client(AUTH_ID, AUTH_TOKEN);

    it('call creation (`calls.create`): POST .../Call/ with the same fields, machine detection and ring timeout included', async () => {
      const created = await ours.createCall({
        from: '+918047180001',
        to: '+919812345678',
        answerUrl: 'https://api.example.in/api/v1/telephony/calls/c/answer',
        ringUrl: 'https://api.example.in/api/v1/telephony/calls/c/status',
        hangupUrl: 'https://api.example.in/api/v1/telephony/calls/c/status',
        timeLimitSeconds: 620,
        ringTimeoutSeconds: 45,
        machineDetection: { url: 'https://api.example.in/api/v1/telephony/calls/c/machine', timeMs: 4000 },
      });
      const sdkCreated = await sdk().calls.create('918047180001', '919812345678', 'https://api.example.in/api/v1/telephony/calls/c/answer', {
        answerMethod: 'POST',
        ringUrl: 'https://api.example.in/api/v1/telephony/calls/c/status',
        hangupUrl: 'https://api.example.in/api/v1/telephony/calls/c/status',
        timeLimit: 620,
        ringTimeout: 45,
        machineDetection: 'true',
        machineDetectionUrl: 'https://api.example.in/api/v1/telephony/calls/c/machine',
        machineDetectionMethod: 'POST',
        machineDetectionTime: 4000,
      });
      expect(ourSent).to.deep.equal(sdkSent);
      expect(ourSent[0]).to.include({ method: 'POST', path: `${account}Call/` });
      expect(created.providerCallId).to.equal((sdkCreated as unknown as { requestUuid: string }).requestUuid);
    });

    it('hang-up: a call still ringing is canceled (`calls.cancel`: DELETE .../Request/{uuid}/), then an answered one hung up (`calls.hangup`: DELETE .../Call/{uuid}/)', async () => {
      await ours.hangupCall('9834029e-58b6-11e1-b8b7-a5bd0e4e126f');
      await sdk()
        .calls.cancel('9834029e-58b6-11e1-b8b7-a5bd0e4e126f')
        .catch(() => undefined); // 404, as the local server answered ours
      await sdk().calls.hangup('9834029e-58b6-11e1-b8b7-a5bd0e4e126f');
      expect(ourSent).to.deep.equal(sdkSent);
      expect(ourSent.map((s) => `${s.method} ${s.path.slice(account.length)}`)).to.deep.equal([
        'DELETE Request/9834029e-58b6-11e1-b8b7-a5bd0e4e126f/',
        'DELETE Call/9834029e-58b6-11e1-b8b7-a5bd0e4e126f/',
      ]);
    });

    it('transfer (`calls.transfer`): POST .../Call/{uuid}/ with legs=aleg, aleg_url and aleg_method', async () => {
      await ours.transferCall('9834029e-58b6-11e1-b8b7-a5bd0e4e126f', 'https://api.example.in/api/v1/telephony/calls/c/transfer/dial?to=%2B919812345678');
      // The SDK's typings ask for the B leg's fields too; its code sends only what it is given.
      const params = { legs: 'aleg', alegUrl: 'https://api.example.in/api/v1/telephony/calls/c/transfer/dial?to=%2B919812345678', alegMethod: 'POST' };
      await sdk().calls.transfer('9834029e-58b6-11e1-b8b7-a5bd0e4e126f', params as Parameters<plivo.Client['calls']['transfer']>[1]);
      expect(ourSent).to.deep.equal(sdkSent);
    });

    it('number look-ups (`numbers.list`, `numbers.get`): GET .../Number/ with the same query, GET .../Number/{number}/', async () => {
      await ours.listNumbers({ startsWith: '9180', limit: 20, offset: 40 });
      await sdk().numbers.list({ limit: 20, offset: 40, services: 'voice', numberStartswith: '9180' });
      await ours.getNumber('+918047180001');
      // `numbers.get` is in the SDK's code (dist/resources/numbers.js) but not in its typings.
      await (sdk().numbers as unknown as { get(number: string): Promise<unknown> }).get('918047180001');
      expect(ourSent).to.deep.equal(sdkSent);
      expect(ourSent.map((s) => s.path.slice(account.length))).to.deep.equal(['Number/', 'Number/918047180001/']);
    });
  });
});
