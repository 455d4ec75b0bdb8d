/**
 * Our speech-recognition adapter (providers/stt/deepgram-style.ts) held to Deepgram's own
 * artefacts: the official SDK's types (`@deepgram/sdk` 5.13.0) for the models and the query
 * parameters we send, and the documentation's example messages (test/fixtures/deepgram/,
 * each with its page) played by a bare WebSocket server in this file, not by our simulator.
 */
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { expect } from 'chai';
import { WebSocketServer, type WebSocket } from 'ws';
import { ListenV1Model, ListenV2Model } from '@deepgram/sdk';
import type { V1Client } from '@deepgram/sdk/dist/cjs/api/resources/listen/resources/v1/client/Client';
import type { V2Client } from '@deepgram/sdk/dist/cjs/api/resources/listen/resources/v2/client/Client';
import { CATALOG } from '../../domain/agents/catalog';
import { MIN_UTTERANCE_END_MS, StreamingTranscriber } from '../../providers/stt/deepgram-style';
import type { RecognitionSettings } from '../../providers/stt/types';
import { STREAMING_MODELS } from '../../simulators/stt/simulator';
import { CONNECTED, fluxLifecycle, METADATA, results, turnInfo, UTTERANCE_END } from '../fixtures/deepgram/messages';

/** The literal model ids an SDK model enum lists (its type also admits any string). */
type Listed<T extends Record<string, string>> = T[keyof T];

// Type-level: typecheck fails if the catalog sends a model the SDK does not name, or if the
// providers are not where these lines expect them.
const [providerA, providerB] = CATALOG.transcriberProviders;
const fluxModel: Listed<typeof ListenV2Model> = providerA.model;
const v1Model: Listed<typeof ListenV1Model> = providerB.model;
const providerAId: 'provider_a' = providerA.id;
const providerBId: 'provider_b' = providerB.id;

/**
 * Every query parameter the SDK's `connect()` takes, one entry per key of its ConnectArgs (a
 * key added to or dropped from the SDK fails typecheck here); the client-only options
 * (headers, reconnects, ...) are not query parameters and are left out by name.
 */
type ClientOnly =
  'Authorization' | 'protocols' | 'queryParams' | 'headers' | 'debug' | 'reconnectAttempts' | 'connectionTimeoutInSeconds' | 'abortSignal' | 'shouldReconnect';
const V1_QUERY = {
  callback: true,
  callback_method: true,
  channels: true,
  detect_entities: true,
  diarize: true,
  diarize_model: true,
  dictation: true,
  encoding: true,
  endpointing: true,
  extra: true,
  interim_results: true,
  keyterm: true,
  keywords: true,
  language: true,
  mip_opt_out: true,
  model: true,
  multichannel: true,
  numerals: true,
  profanity_filter: true,
  punctuate: true,
  redact: true,
  replace: true,
  sample_rate: true,
  search: true,
  smart_format: true,
  tag: true,
  utterance_end_ms: true,
  vad_events: true,
  version: true,
} as const satisfies Record<Exclude<keyof V1Client.ConnectArgs, ClientOnly>, true>;
const V2_QUERY = {
  model: true,
  encoding: true,
  sample_rate: true,
  eager_eot_threshold: true,
  eot_threshold: true,
  eot_timeout_ms: true,
  keyterm: true,
  language_hint: true,
  profanity_filter: true,
  numerals: true,
  redact: true,
  mip_opt_out: true,
  tag: true,
} as const satisfies Record<Exclude<keyof V2Client.ConnectArgs, ClientOnly>, true>;
// The reverse direction: no key of ours that the SDK's ConnectArgs lacks.
const v1KeysAreSdkKeys: readonly (keyof V1Client.ConnectArgs)[] = Object.keys(V1_QUERY) as (keyof typeof V1_QUERY)[];
const v2KeysAreSdkKeys: readonly (keyof V2Client.ConnectArgs)[] = Object.keys(V2_QUERY) as (keyof typeof V2_QUERY)[];

interface Played {
  url: URL;
  authorization: string | undefined;
}

/** A bare Deepgram stand-in: records the handshake, plays `script` once open, answers CloseStream with Metadata. */
async function playing(script: object[], closing: object[] = [METADATA]): Promise<{ baseUrl: string; played: Played[]; close(): Promise<void> }> {
  const played: Played[] = [];
  const server = http.createServer();
  const sockets = new WebSocketServer({ server });
  sockets.on('connection', (ws: WebSocket, req) => {
    played.push({ url: new URL(req.url ?? '/', 'http://deepgram'), authorization: req.headers.authorization });
    for (const message of script) ws.send(JSON.stringify(message));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
      if ((JSON.parse(text) as { type?: string }).type !== 'CloseStream') return;
      for (const message of closing) ws.send(JSON.stringify(message));
      ws.close(1000);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    played,
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function settings(provider: 'provider_a' | 'provider_b', language = 'hi'): RecognitionSettings {
  return {
    provider,
    model: provider === 'provider_a' ? providerA.model : providerB.model,
    language,
    turnDetection: 'balanced',
    endpointingMs: 300,
    keyterms: ['Asha'],
  };
}

/** Opens a stream against `baseUrl`, waits for the script to play, closes it; what the handlers heard. */
async function listenTo(baseUrl: string, recognition: RecognitionSettings, settle = 150) {
  const heard = { interims: [] as string[], turns: [] as { text: string; language: string | null; turnIndex: number }[], errors: [] as Error[] };
  const transcriber = new StreamingTranscriber({ baseUrl, apiKey: 'dg-key', connectTimeoutMs: 2_000, closeWaitMs: 500 });
  const stream = await transcriber.open(recognition, {
    onInterim: (text) => heard.interims.push(text),
    onTurnEnd: ({ text, language, turnIndex }) => heard.turns.push({ text, language, turnIndex }), // where in the audio it ended: test/unit/stt-streaming.test.ts
    onError: (error) => heard.errors.push(error),
  });
  await new Promise((resolve) => setTimeout(resolve, settle));
  const { audioSeconds } = await stream.close();
  return { ...heard, audioSeconds };
}

describe('conformance: Deepgram speech recognition', () => {
  describe('the models we send', () => {
    it('are models the SDK lists, on the path that serves them (typecheck holds the same)', () => {
      expect(providerAId).to.equal('provider_a');
      expect(providerBId).to.equal('provider_b');
      expect(Object.values(ListenV2Model)).to.include(fluxModel);
      expect(Object.values(ListenV1Model)).to.include(v1Model);
      // provider_a detects the language: only the multilingual Flux model sends `languages`.
      expect(fluxModel).to.equal(ListenV2Model.FluxGeneralMulti);
    });

    it('are the ones the simulator accepts, and the simulator accepts only models the SDK lists', () => {
      expect(STREAMING_MODELS['/v2/listen']).to.include(fluxModel);
      expect(STREAMING_MODELS['/v1/listen']).to.include(v1Model);
      expect(Object.values(ListenV2Model)).to.include.members([...STREAMING_MODELS['/v2/listen']]);
      expect(Object.values(ListenV1Model)).to.include.members([...STREAMING_MODELS['/v1/listen']]);
    });
  });

  describe('/v1/listen (provider_b)', () => {
    it('connects with only query parameters the SDK knows, with UtteranceEnd, interim results and punctuation', async () => {
      const server = await playing([]);
      try {
        await listenTo(server.baseUrl, settings('provider_b', 'en-IN'));
        const [{ url, authorization }] = server.played as [Played];
        expect(authorization).to.equal('Token dg-key');
        expect(url.pathname).to.equal('/v1/listen');
        for (const key of url.searchParams.keys()) expect(v1KeysAreSdkKeys, `query parameter ${key}`).to.include(key);
        expect(Object.fromEntries(url.searchParams)).to.include({
          model: 'nova-3',
          language: 'en-IN',
          encoding: 'mulaw',
          sample_rate: '8000',
          channels: '1',
          endpointing: '300',
          interim_results: 'true',
          utterance_end_ms: '1000',
          punctuate: 'true',
          smart_format: 'true',
        });
        expect(MIN_UTTERANCE_END_MS).to.be.at.least(1000);
        expect(url.searchParams.getAll('keyterm')).to.deep.equal(['Asha']);
      } finally {
        await server.close();
      }
    });

    it('ends the turn at speech_final, and the UtteranceEnd after it ends nothing more', async () => {
      const server = await playing([results('another', false, false), results('another big', true, true), UTTERANCE_END]);
      try {
        const heard = await listenTo(server.baseUrl, settings('provider_b'));
        expect(heard.turns).to.deep.equal([{ text: 'another big', language: null, turnIndex: 0 }]);
        expect(heard.interims).to.deep.equal(['another']);
        expect(heard.errors).to.deep.equal([]);
        expect(heard.audioSeconds).to.equal(METADATA.duration);
      } finally {
        await server.close();
      }
    });

    it('ends the turn at UtteranceEnd when no speech_final comes (background noise), once', async () => {
      const server = await playing([
        results('I want to', true, false),
        results('book a table', true, false),
        UTTERANCE_END,
        results('', true, true),
        UTTERANCE_END,
      ]);
      try {
        const heard = await listenTo(server.baseUrl, settings('provider_b'));
        expect(heard.turns).to.deep.equal([{ text: 'I want to book a table', language: null, turnIndex: 0 }]);
      } finally {
        await server.close();
      }
    });

    it('starts a new turn with the words after an UtteranceEnd', async () => {
      const server = await playing([results('Hello.', true, false), UTTERANCE_END, results('Are you there?', true, true)]);
      try {
        const heard = await listenTo(server.baseUrl, settings('provider_b'));
        expect(heard.turns.map((t) => t.text)).to.deep.equal(['Hello.', 'Are you there?']);
      } finally {
        await server.close();
      }
    });
  });

  describe('/v1/listen utterance_end_ms', () => {
    it('waits at least as long as the agent endpointing_ms, so UtteranceEnd never cuts a turn shorter', async () => {
      const server = await playing([]);
      try {
        await listenTo(server.baseUrl, { ...settings('provider_b'), endpointingMs: 1500 });
        const [{ url }] = server.played as [Played];
        expect(url.searchParams.get('utterance_end_ms')).to.equal('1500');
      } finally {
        await server.close();
      }
    });
  });

  describe('/v2/listen (provider_a, Flux)', () => {
    it('connects with only query parameters the SDK knows', async () => {
      const server = await playing([CONNECTED]);
      try {
        await listenTo(server.baseUrl, settings('provider_a'));
        const [{ url }] = server.played as [Played];
        expect(url.pathname).to.equal('/v2/listen');
        for (const key of url.searchParams.keys()) expect(v2KeysAreSdkKeys, `query parameter ${key}`).to.include(key);
        expect(Object.fromEntries(url.searchParams)).to.include({ model: 'flux-general-multi', encoding: 'mulaw', sample_rate: '8000', eot_threshold: '0.7' });
      } finally {
        await server.close();
      }
    });

    it('asks for early ends with eager_eot_threshold, a query parameter the SDK knows, only when set', async () => {
      const server = await playing([CONNECTED]);
      try {
        await listenTo(server.baseUrl, { ...settings('provider_a'), eagerEndOfTurnThreshold: 0.4 });
        await listenTo(server.baseUrl, settings('provider_a'));
        const [eager, plain] = server.played as [Played, Played];
        expect(v2KeysAreSdkKeys).to.include('eager_eot_threshold');
        expect(eager.url.searchParams.get('eager_eot_threshold')).to.equal('0.4');
        expect(plain.url.searchParams.has('eager_eot_threshold')).to.equal(false);
      } finally {
        await server.close();
      }
    });

    it('follows the documented lifecycle (StartOfTurn, Update, EagerEndOfTurn, TurnResumed, EndOfTurn) to one turn with its language', async () => {
      const next = turnInfo('StartOfTurn', 1, 'नमस्ते', 8, ['hi']);
      const server = await playing([CONNECTED, ...fluxLifecycle(['en']), next, turnInfo('EndOfTurn', 1, 'नमस्ते', 9, ['hi', 'en'])]);
      try {
        const heard = await listenTo(server.baseUrl, settings('provider_a'));
        expect(heard.turns).to.deep.equal([
          { text: 'Hi I need to cancel my subscription please', language: 'en', turnIndex: 0 },
          { text: 'नमस्ते', language: 'hi', turnIndex: 1 },
        ]);
        expect(heard.interims).to.include.members(['Hi', 'Hi I need to cancel', 'Hi I need to cancel my']);
      } finally {
        await server.close();
      }
    });

    it('reports no language when the messages carry none (flux-general-en), and a repeated EndOfTurn once', async () => {
      const endOfTurn = turnInfo('EndOfTurn', 0, 'Hello', 2);
      const server = await playing([CONNECTED, turnInfo('StartOfTurn', 0, 'Hello', 1), endOfTurn, endOfTurn]);
      try {
        const heard = await listenTo(server.baseUrl, settings('provider_a'));
        expect(heard.turns).to.deep.equal([{ text: 'Hello', language: null, turnIndex: 0 }]);
      } finally {
        await server.close();
      }
    });

    it('keeps the language an earlier event of the turn detected when the EndOfTurn has none', async () => {
      const server = await playing([CONNECTED, turnInfo('StartOfTurn', 0, 'Namaste', 1, ['hi']), turnInfo('EndOfTurn', 0, 'Namaste ji', 2)]);
      try {
        const heard = await listenTo(server.baseUrl, settings('provider_a'));
        expect(heard.turns).to.deep.equal([{ text: 'Namaste ji', language: 'hi', turnIndex: 0 }]);
      } finally {
        await server.close();
      }
    });
  });
});
