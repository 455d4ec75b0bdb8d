import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { loadConfig } from '../../config/env';
import { ProviderUnavailableError } from '../../providers/errors';
import { PlivoTelephony } from '../../providers/telephony/plivo';
import { startTelephonySimulator, type TelephonySimulator } from '../../simulators/telephony/simulator';
import { OpenAiCompatibleSpeech } from '../../providers/tts/openai-compatible';
import { startSpeechSimulator } from '../../simulators/tts/simulator';

/** The adapters against the simulators and servers speaking the same wire formats; the provider settings. */
describe('provider adapters', () => {
  describe('Plivo telephony', () => {
    let simulator: TelephonySimulator;
    let plivo: PlivoTelephony;
    const pool = Array.from({ length: 25 }, (_, i) => `+9180400000${String(i).padStart(2, '0')}`);
    before(async () => {
      simulator = await startTelephonySimulator({ numbers: pool });
      plivo = new PlivoTelephony({ baseUrl: simulator.url, authId: simulator.authId, authToken: simulator.authToken, timeoutMs: 500 });
    });
    after(() => simulator.close());

    it('pages the account’s numbers 20 at a time, in E.164', async () => {
      const first = await plivo.listNumbers({ limit: 20, offset: 0 });
      expect(first.numbers.map((n) => n.number)).to.deep.equal(pool.slice(0, 20));
      expect(first.nextOffset).to.equal(20);
      const second = await plivo.listNumbers({ limit: 20, offset: 20 });
      expect(second.numbers.map((n) => n.number)).to.deep.equal(pool.slice(20));
      expect(second.nextOffset).to.equal(null);
      expect(first.numbers[0]).to.deep.equal({ number: pool[0], region: 'Bangalore, INDIA', numberType: 'local', voiceEnabled: true });
    });

    it('asks for at most 20 a page, filters by leading digits, and finds one number or none', async () => {
      expect((await plivo.listNumbers({ limit: 100, offset: 0 })).numbers).to.have.length(20);
      expect((await plivo.listNumbers({ limit: 20, offset: 0, startsWith: '91804000002' })).numbers.map((n) => n.number)).to.deep.equal(pool.slice(20, 25));
      expect((await plivo.getNumber(pool[3]!))?.number).to.equal(pool[3]);
      expect(await plivo.getNumber('+14155550100')).to.equal(null);
    });

    it('reports wrong credentials, refused connections and errors as the provider being unavailable', async () => {
      const cases: [PlivoTelephony, RegExp][] = [
        [new PlivoTelephony({ baseUrl: simulator.url, authId: simulator.authId, authToken: 'wrong', timeoutMs: 500 }), /answered 401/],
        [new PlivoTelephony({ baseUrl: 'http://127.0.0.1:1', authId: 'a', authToken: 'b', timeoutMs: 500 }), /connection failed/],
      ];
      for (const [adapter, reason] of cases) {
        const err = await adapter.listNumbers({ limit: 20, offset: 0 }).catch((e: unknown) => e);
        expect(err).to.be.instanceOf(ProviderUnavailableError);
        expect((err as Error).message).to.match(reason);
      }
      simulator.mode = 'failing';
      try {
        expect(await plivo.getNumber(pool[0]!).catch((e: unknown) => e)).to.be.instanceOf(ProviderUnavailableError);
      } finally {
        simulator.mode = 'normal';
      }
    });
  });

  describe('OpenAI-compatible speech voices', () => {
    it('reads the simulator’s voice objects with the Bearer key', async () => {
      const simulator = await startSpeechSimulator();
      try {
        const voices = await new OpenAiCompatibleSpeech({ baseUrl: simulator.url, apiKey: simulator.apiKey, timeoutMs: 500, flavour: 'kokoro' }).listVoices();
        expect(voices).to.deep.equal(simulator.voices);
        const refused = await new OpenAiCompatibleSpeech({ baseUrl: simulator.url, apiKey: '', timeoutMs: 500, flavour: 'kokoro' })
          .listVoices()
          .catch((e: unknown) => e);
        expect((refused as Error).message).to.match(/answered 401/);
      } finally {
        await simulator.close();
      }
    });

    it('reads bare voice names (Kokoro-FastAPI) and refuses a body without `voices`', async () => {
      const bodies = [
        { voices: ['af_bella', { id: 'hf_alpha', name: 'Alpha', language: 'hi' }, { voice_id: 'x1' }, '', { name: 'no id' }] },
        { data: [] },
        'not json',
      ];
      const server = http.createServer((_req, res) => {
        const body = bodies.shift();
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const speech = new OpenAiCompatibleSpeech({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        apiKey: '',
        timeoutMs: 500,
        flavour: 'kokoro',
      });
      try {
        expect(await speech.listVoices()).to.deep.equal([
          { id: 'af_bella', name: 'af_bella', language: null, gender: null },
          { id: 'hf_alpha', name: 'Alpha', language: 'hi', gender: null },
          { id: 'x1', name: 'x1', language: null, gender: null },
        ]);
        expect(((await speech.listVoices().catch((e: unknown) => e)) as Error).message).to.match(/without `voices`/);
        expect(((await speech.listVoices().catch((e: unknown) => e)) as Error).message).to.match(/without a JSON body/);
      } finally {
        server.close();
      }
    });
  });

  describe('settings', () => {
    it('leaves a service without a base URL unconfigured, in every environment', () => {
      for (const NODE_ENV of ['development', 'test']) {
        expect(loadConfig({ NODE_ENV }).providers).to.deep.equal({ telephony: null, tts: null, llm: null, stt: null, payments: null, timeoutMs: 5_000 });
      }
    });

    it('reads the base URLs (trailing slashes dropped), credentials and timeout', () => {
      const { providers } = loadConfig({
        TELEPHONY_BASE_URL: 'https://api.plivo.com/',
        PLIVO_AUTH_ID: 'MAXXXX',
        PLIVO_AUTH_TOKEN: 'token',
        TTS_BASE_URL: 'http://127.0.0.1:8880',
        LLM_OPENAI_API_KEY: 'sk-test',
        STT_BASE_URL: 'wss://recognition.example.com',
        STT_API_KEY: 'dg-test',
        PAYMENTS_BASE_URL: 'https://api.razorpay.com/',
        RAZORPAY_KEY_ID: 'rzp_test_1',
        RAZORPAY_KEY_SECRET: 'secret',
        RAZORPAY_WEBHOOK_SECRET: 'webhook-secret',
        PROVIDER_TIMEOUT_MS: '2500',
      });
      expect(providers).to.deep.equal({
        telephony: { baseUrl: 'https://api.plivo.com', authId: 'MAXXXX', authToken: 'token' },
        tts: { baseUrl: 'http://127.0.0.1:8880', apiKey: '', flavour: 'auto' },
        llm: { openai: { baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-test' }, azureOpenai: null, local: null },
        stt: { baseUrl: 'wss://recognition.example.com', apiKey: 'dg-test' },
        payments: { baseUrl: 'https://api.razorpay.com', keyId: 'rzp_test_1', keySecret: 'secret', webhookSecret: 'webhook-secret' },
        timeoutMs: 2500,
      });
    });

    it('refuses a telephony URL without credentials, a URL that is not http(s), and a timeout outside 100 to 60000 ms', () => {
      expect(() => loadConfig({ TELEPHONY_BASE_URL: 'https://api.plivo.com', PLIVO_AUTH_TOKEN: 't' })).to.throw('PLIVO_AUTH_ID');
      expect(() => loadConfig({ TELEPHONY_BASE_URL: 'https://api.plivo.com', PLIVO_AUTH_ID: 'a' })).to.throw('PLIVO_AUTH_TOKEN');
      expect(() => loadConfig({ TTS_BASE_URL: 'ftp://speech' })).to.throw('TTS_BASE_URL');
      expect(() => loadConfig({ PAYMENTS_BASE_URL: 'https://api.razorpay.com', RAZORPAY_KEY_SECRET: 's' })).to.throw('RAZORPAY_KEY_ID');
      expect(() => loadConfig({ PAYMENTS_BASE_URL: 'https://api.razorpay.com', RAZORPAY_KEY_ID: 'k' })).to.throw('RAZORPAY_KEY_SECRET');
      expect(() => loadConfig({ PROVIDER_TIMEOUT_MS: '99' })).to.throw('PROVIDER_TIMEOUT_MS');
      expect(() => loadConfig({ PROVIDER_TIMEOUT_MS: '60001' })).to.throw('PROVIDER_TIMEOUT_MS');
      expect(loadConfig({ PROVIDER_TIMEOUT_MS: '100' }).providers.timeoutMs).to.equal(100);
      expect(loadConfig({ PROVIDER_TIMEOUT_MS: '60000' }).providers.timeoutMs).to.equal(60_000);
    });
  });
});
