/**
 * Our speech-synthesis adapter (providers/tts/openai-compatible.ts) held to OpenAI's own
 * artefacts: the official `openai` SDK (6.49.0) names the fields of `POST /v1/audio/speech`
 * (`SpeechCreateParams`) and the built-in voices (its `voice` field); OpenAI has no voice list
 * endpoint and refuses fields it does not know. The simulator's `openai` kind plays that server.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { SpeechCreateParams } from 'openai/resources/audio/speech';
import { withDefaultVoice } from '../../providers/tts/default-voice';
import { OpenAiCompatibleSpeech } from '../../providers/tts/openai-compatible';
import { OPENAI_VOICE_IDS } from '../../providers/tts/openai-voices';
import { startSpeechSimulator, type SpeechSimulator } from '../../simulators/tts/simulator';
import { activeOwner, type SignedUp } from '../support/accounts';
import { startApi, type RunningApi } from '../support/api';
import { startTestProviders, type TestProviders } from '../support/providers';
import { agentsClient } from '../api/agents/helpers';

/** Every field of the SDK's SpeechCreateParams, one entry per key (a key added or dropped in the SDK fails typecheck). */
const SPEECH_FIELDS = {
  input: true,
  model: true,
  voice: true,
  instructions: true,
  response_format: true,
  speed: true,
  stream_format: true,
} as const satisfies Record<keyof SpeechCreateParams, true>;
const sdkFields: readonly (keyof SpeechCreateParams)[] = Object.keys(SPEECH_FIELDS) as (keyof typeof SPEECH_FIELDS)[];

/** The voices the SDK names for `SpeechCreateParams.voice`: its type's literals and its documentation's list. */
function sdkVoices(): { typed: string[]; documented: string[] } {
  const source = readFileSync(require.resolve('openai/resources/audio/speech').replace(/\.js$/, '.d.ts'), 'utf8');
  const declaration = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*voice: ([^;]+);/.exec(source);
  if (!declaration) throw new Error('the SDK no longer declares SpeechCreateParams.voice as this test reads it');
  const [, doc, type] = declaration as unknown as [string, string, string];
  const documented =
    doc
      .slice(0, doc.indexOf('You may'))
      .match(/`([a-z]+)`/g)
      ?.map((v) => v.slice(1, -1)) ?? [];
  const typed = type.match(/'([a-z]+)'/g)?.map((v) => v.slice(1, -1)) ?? [];
  return { typed, documented };
}

const request = (voice: string) => ({ text: 'Namaste, main aapki kya madad kar sakti hoon?', voice, model: 'gpt-4o-mini-tts', speed: 1, language: 'hi' });

async function drain(audio: AsyncIterable<Buffer>): Promise<number> {
  let bytes = 0;
  for await (const piece of audio) bytes += piece.length;
  return bytes;
}

describe('conformance: OpenAI speech', () => {
  let openai: SpeechSimulator;
  let kokoro: SpeechSimulator;

  before(async () => {
    openai = await startSpeechSimulator({ kind: 'openai' });
    kokoro = await startSpeechSimulator();
  });
  after(async () => {
    await openai?.close();
    await kokoro?.close();
  });

  it('our OpenAI voices are exactly the ones the SDK names for `voice`, alloy (a voice of every catalog model) first', () => {
    const { typed, documented } = sdkVoices();
    expect(typed).to.include('alloy');
    expect([...OPENAI_VOICE_IDS].sort()).to.deep.equal([...new Set([...typed, ...documented])].sort());
    expect(OPENAI_VOICE_IDS[0]).to.equal('alloy');
  });

  it('tells OpenAI by its address without asking it anything', async () => {
    const speech = new OpenAiCompatibleSpeech({ baseUrl: 'https://api.openai.com', apiKey: 'sk-test', timeoutMs: 50 });
    expect(await speech.serverFlavour()).to.equal('openai');
    expect((await speech.listVoices()).map((v) => v.id)).to.deep.equal([...OPENAI_VOICE_IDS]);
  });

  it('against a server without a voice list (auto): OpenAI voices, and a body of only SpeechCreateParams fields', async () => {
    const speech = new OpenAiCompatibleSpeech({ baseUrl: openai.url, apiKey: openai.apiKey, timeoutMs: 2_000 });
    expect(await speech.serverFlavour()).to.equal('openai');
    const voices = await speech.listVoices();
    expect(voices.map((v) => v.id)).to.deep.equal([...OPENAI_VOICE_IDS]);
    expect(voices.every((v) => v.language === null)).to.equal(true);
    const before = openai.speechFields.length;
    expect(await drain(speech.synthesize(request('coral')))).to.be.greaterThan(0);
    const fields = openai.speechFields[before]!;
    for (const field of fields) expect(sdkFields, `body field ${field}`).to.include(field);
    expect(fields).to.not.include('lang_code');
    expect(openai.speechRequests.at(-1)).to.include({ voice: 'coral', model: 'gpt-4o-mini-tts', lang_code: null });
  });

  it('the OpenAI-like simulator refuses a field OpenAI does not know, as OpenAI does (400)', async () => {
    const res = await fetch(`${openai.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${openai.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input: 'hi', voice: 'alloy', response_format: 'pcm', lang_code: 'hi' }),
    });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).to.match(/Unrecognized request argument supplied: lang_code/);
  });

  it('against a server that lists its voices (auto: Kokoro-FastAPI): its voices, and its lang_code', async () => {
    const speech = new OpenAiCompatibleSpeech({ baseUrl: kokoro.url, apiKey: kokoro.apiKey, timeoutMs: 2_000 });
    expect(await speech.serverFlavour()).to.equal('kokoro');
    expect((await speech.listVoices()).map((v) => v.id)).to.include('anika');
    await drain(speech.synthesize(request('anika')));
    expect(kokoro.speechRequests.at(-1)).to.include({ voice: 'anika', lang_code: 'hi' });
  });

  it('a name-only agent speaks with the default voice (alloy) on a server without a voice list', async () => {
    const speech = withDefaultVoice(new OpenAiCompatibleSpeech({ baseUrl: openai.url, apiKey: openai.apiKey, timeoutMs: 2_000 }), 'hi');
    expect(await drain(speech.synthesize(request('')))).to.be.greaterThan(0);
    expect(openai.speechRequests.at(-1)).to.include({ voice: 'alloy', lang_code: null });
  });

  describe('the API with OpenAI as the speech server', function () {
    this.timeout(60_000);
    let providers: TestProviders;
    let api: RunningApi;
    let owner: SignedUp;

    before(async () => {
      providers = await startTestProviders();
      api = await startApi({ providers: { ...providers.config, tts: { baseUrl: openai.url, apiKey: openai.apiKey } } });
      owner = await activeOwner(api, { name: 'Meera Iyer' });
    });
    after(async () => {
      await api?.close();
      await providers?.close();
    });

    it('lists OpenAI voices in the catalog (200), alloy the default', async () => {
      const res = await api.request('/api/v1/catalog/voices', { headers: owner.auth });
      expect(res.status).to.equal(200);
      const voices: { id: string; default: boolean }[] = await res.json();
      expect(voices.map((v) => v.id)).to.deep.equal([...OPENAI_VOICE_IDS]);
      expect(voices.filter((v) => v.default).map((v) => v.id)).to.deep.equal(['alloy']);
    });

    it('saves an agent with an OpenAI voice (2xx) and refuses a voice OpenAI does not have (422)', async () => {
      const agents = agentsClient(api, owner.auth);
      const created = await agents.created({ name: 'Coral line', voice: { voice_id: 'coral', language: 'hi' } });
      expect(created.voice).to.include({ voice_id: 'coral' });
      const refused = await agents.create({ name: 'Anika line', voice: { voice_id: 'anika', language: 'hi' } });
      expect(refused.status).to.equal(422);
    });
  });
});
