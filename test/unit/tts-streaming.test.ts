import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Downsampler } from '../../providers/audio/pcm';
import { SpeechDecoder, speechDurationMs } from '../../simulators/simulated-speech';
import { ProviderRefusedError, ProviderUnavailableError } from '../../providers/errors';
import { OpenAiCompatibleSpeech } from '../../providers/tts/openai-compatible';
import { startSpeechSimulator, type SpeechSimulator } from '../../simulators/tts/simulator';
import { SYNTHESIS_SAMPLE_RATE, type SpeechRequest } from '../../providers/tts/types';
import { until } from '../support/until';

const ENGLISH = 'Namaste! How can I help you today?';
const HINDI = 'नमस्ते, मैं आपकी कैसे मदद कर सकती हूँ?';
/** About 24 s of speech: 2.4 s of streaming at the simulator's pace, long enough to stop in the middle. */
const LONG = 'Your order will reach you by Friday evening. '.repeat(7);

interface Received {
  pieces: Buffer[];
  /** Milliseconds from the request to each piece. */
  arrivals: number[];
  bytes: number;
}

async function receive(audio: AsyncIterable<Buffer>): Promise<Received> {
  const started = performance.now();
  const received: Received = { pieces: [], arrivals: [], bytes: 0 };
  for await (const piece of audio) {
    received.pieces.push(piece);
    received.arrivals.push(performance.now() - started);
    received.bytes += piece.length;
  }
  return received;
}

/** What the audio says, heard as telephony would: 24 kHz down to 8 kHz, in the pieces' own splits. */
function heardText(pieces: Buffer[]): string {
  const downsampler = new Downsampler(SYNTHESIS_SAMPLE_RATE / 8000);
  const decoder = new SpeechDecoder(8000);
  return pieces.map((piece) => decoder.push(downsampler.pushBytes(piece)).text).join('');
}

async function failureOf(audio: AsyncIterable<Buffer>): Promise<unknown> {
  return receive(audio).then(
    () => new Error('expected the synthesis to fail'),
    (err: unknown) => err,
  );
}

/** OpenAI-compatible streaming synthesis against the speech simulator over loopback. */
describe('streaming speech synthesis', () => {
  let simulator: SpeechSimulator;
  let speech: OpenAiCompatibleSpeech;
  const request = (fields: Partial<SpeechRequest>): SpeechRequest => ({
    text: ENGLISH,
    voice: 'meera',
    model: 'kokoro',
    speed: 1,
    language: 'en-IN',
    ...fields,
  });

  before(async () => {
    simulator = await startSpeechSimulator();
    speech = new OpenAiCompatibleSpeech({ baseUrl: simulator.url, apiKey: simulator.apiKey, timeoutMs: 2_000, flavour: 'kokoro' });
  });
  after(() => simulator.close());
  afterEach(() => {
    simulator.latencyMs = 0;
    simulator.mode = 'normal';
  });

  it('yields the audio in pieces as they arrive, the first after the time to first byte, and the audio says the text', async () => {
    simulator.latencyMs = 200;
    const received = await receive(speech.synthesize(request({})));
    expect(received.bytes).to.equal((speechDurationMs(ENGLISH) * SYNTHESIS_SAMPLE_RATE * 2) / 1000);
    expect(received.pieces.length).to.be.at.least(5);
    expect(received.arrivals[0]).to.be.at.least(190);
    // Streamed, not buffered: the pieces came over a stretch of time, the first well before the last.
    expect(received.arrivals.at(-1)! - received.arrivals[0]!).to.be.at.least(100);
    expect(heardText(received.pieces)).to.equal(ENGLISH);
    expect(simulator.speechRequests.at(-1)).to.deep.equal({ model: 'kokoro', input: ENGLISH, voice: 'meera', speed: 1, lang_code: 'en-IN' });
    expect(simulator.speechStreams.at(-1)).to.include({ outcome: 'finished', sentBytes: received.bytes });
  });

  it('speaks faster at speed 1.5 (about 1/1.5 of the audio) and sends the speed, voice, model and language', async () => {
    const normal = await receive(speech.synthesize(request({ text: HINDI, voice: 'anika', language: 'hi', model: 'tts-1' })));
    const fast = await receive(speech.synthesize(request({ text: HINDI, voice: 'anika', language: 'hi', model: 'tts-1', speed: 1.5 })));
    expect(fast.bytes / normal.bytes).to.be.closeTo(1 / 1.5, 0.01);
    expect(heardText(normal.pieces)).to.equal(HINDI);
    expect(heardText(fast.pieces)).to.equal(HINDI);
    expect(simulator.speechRequests.slice(-2)).to.deep.equal([
      { model: 'tts-1', input: HINDI, voice: 'anika', speed: 1, lang_code: 'hi' },
      { model: 'tts-1', input: HINDI, voice: 'anika', speed: 1.5, lang_code: 'hi' },
    ]);
  });

  it('reports a voice the server does not have and a wrong key as refusals naming the setting to fix, without asking to retry', async () => {
    const before = simulator.speechRequests.length;
    const unknownVoice = await failureOf(speech.synthesize(request({ voice: 'nobody' })));
    expect(unknownVoice).to.be.instanceOf(ProviderRefusedError);
    expect((unknownVoice as Error).message).to.equal(
      "the speech synthesis provider refused the agent's voice 'nobody' (agent setting voice.voice_id): answered 400: voice 'nobody' is not one of: anika, kabir, meera, arjun, tara, dev",
    );
    const wrongKey = new OpenAiCompatibleSpeech({ baseUrl: simulator.url, apiKey: 'wrong', timeoutMs: 500, flavour: 'kokoro' });
    for (const refused of [await failureOf(wrongKey.synthesize(request({}))), await wrongKey.listVoices().catch((e: unknown) => e)]) {
      expect(refused).to.be.instanceOf(ProviderRefusedError);
      expect((refused as Error).message).to.equal(
        'the speech synthesis provider refused the credentials (server setting TTS_API_KEY): answered 401: Incorrect API key provided',
      );
    }
    expect(simulator.speechRequests).to.have.length(before);
  });

  it('reports a failing server (5xx) and a rate limit (429) as the provider being unavailable: retry in a moment', async () => {
    simulator.mode = 'failing';
    const failing = await failureOf(speech.synthesize(request({})));
    expect(failing).to.be.instanceOf(ProviderUnavailableError);
    expect((failing as Error).message).to.match(/answered 500.*retry in a moment$/);
    simulator.mode = 'normal';
    const limited = http.createServer((_req, res) =>
      res.writeHead(429, { 'Content-Type': 'application/json' }).end('{"error":{"message":"Rate limit reached"}}'),
    );
    await new Promise<void>((resolve) => limited.listen(0, '127.0.0.1', resolve));
    try {
      const err = await failureOf(
        new OpenAiCompatibleSpeech({
          baseUrl: `http://127.0.0.1:${(limited.address() as AddressInfo).port}`,
          apiKey: '',
          timeoutMs: 500,
          flavour: 'kokoro',
        }).synthesize(request({})),
      );
      expect(err).to.be.instanceOf(ProviderUnavailableError);
      expect((err as Error).message).to.equal('the speech synthesis provider did not answer (answered 429: Rate limit reached); retry in a moment');
    } finally {
      limited.close();
    }
  });

  it('stops at once on an abort in the middle of the audio, and the server sees the connection close', async () => {
    const controller = new AbortController();
    const audio = speech.synthesize(request({ text: LONG, signal: controller.signal }))[Symbol.asyncIterator]();
    for (let i = 0; i < 3; i++) expect((await audio.next()).done).to.equal(false);
    const pending = audio.next();
    const abortedAt = performance.now();
    controller.abort();
    const err = await pending.then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error | null)?.name).to.equal('AbortError');
    expect(performance.now() - abortedAt).to.be.below(200);
    const stream = await until(
      async () => simulator.speechStreams.at(-1)!,
      (s) => s.outcome !== 'streaming',
      2_000,
      10,
    );
    expect(stream.outcome).to.equal('client closed');
    expect(stream.sentBytes).to.be.below(stream.totalBytes / 2);
  });

  it('stops during the wait for the first byte too, and when the consumer leaves the loop', async () => {
    simulator.latencyMs = 1_000;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expect(((await failureOf(speech.synthesize(request({ signal: controller.signal })))) as Error).name).to.equal('AbortError');
    expect(performance.now() - started).to.be.below(500);
    expect(
      await until(
        async () => simulator.speechStreams.at(-1)!.outcome,
        (o) => o !== 'streaming',
        2_000,
        10,
      ),
    ).to.equal('client closed');

    simulator.latencyMs = 0;
    let pieces = 0;
    for await (const piece of speech.synthesize(request({ text: LONG }))) {
      expect(piece.length).to.be.above(0);
      if (++pieces === 2) break;
    }
    const stream = await until(
      async () => simulator.speechStreams.at(-1)!,
      (s) => s.outcome !== 'streaming',
      2_000,
      10,
    );
    expect(stream.outcome).to.equal('client closed');
    expect(stream.sentBytes).to.be.below(stream.totalBytes / 2);
  });

  it('refuses to start with a signal already aborted', async () => {
    const before = simulator.speechRequests.length;
    expect(((await failureOf(speech.synthesize(request({ signal: AbortSignal.abort() })))) as Error).name).to.equal('AbortError');
    expect(simulator.speechRequests).to.have.length(before);
  });

  it('reports a server that is down or never answers as the provider being unavailable', async () => {
    const stopped = await startSpeechSimulator();
    await stopped.close();
    const down = await failureOf(
      new OpenAiCompatibleSpeech({ baseUrl: stopped.url, apiKey: stopped.apiKey, timeoutMs: 500, flavour: 'kokoro' }).synthesize(request({})),
    );
    expect(down).to.be.instanceOf(ProviderUnavailableError);
    expect((down as Error).message).to.match(/connection failed: ECONNREFUSED/);
    simulator.mode = 'hanging';
    const started = performance.now();
    const silent = await failureOf(
      new OpenAiCompatibleSpeech({ baseUrl: simulator.url, apiKey: simulator.apiKey, timeoutMs: 300, flavour: 'kokoro' }).synthesize(request({})),
    );
    expect(silent).to.be.instanceOf(ProviderUnavailableError);
    expect((silent as Error).message).to.match(/no audio within 300 ms/);
    expect(performance.now() - started).to.be.within(280, 1_500);
  });
});

describe('streaming speech synthesis against a server that stalls', () => {
  it('times out a wait for the next piece, but never a consumer that takes its time between pieces', async () => {
    // One piece, then three more 100 ms apart, then silence without ending the answer.
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'audio/pcm' });
      let sent = 0;
      const send = () => {
        res.write(Buffer.alloc(480));
        if (++sent < 4) setTimeout(send, 100);
      };
      send();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const speech = new OpenAiCompatibleSpeech({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        apiKey: '',
        timeoutMs: 250,
        flavour: 'kokoro',
      });
      let bytes = 0;
      const err = await (async () => {
        for await (const piece of speech.synthesize({ text: 'hi', voice: 'v', model: 'm', speed: 1, language: 'en' })) {
          bytes += piece.length;
          await new Promise((resolve) => setTimeout(resolve, 400)); // longer than the timeout: the audio waits, buffered
        }
      })().then(
        () => null,
        (e: unknown) => e,
      );
      expect(bytes).to.equal(4 * 480);
      expect(err).to.be.instanceOf(ProviderUnavailableError);
      expect((err as Error).message).to.match(/no audio within 250 ms/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
