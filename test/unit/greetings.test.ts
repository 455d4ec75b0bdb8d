import { expect } from 'chai';
import { GreetingAudio, GreetingCache, prepareGreeting, type GreetingKey } from '../../media/conversation/greetings';
import type { SpeechRequest, Synthesizer } from '../../providers/tts/types';

const key = (overrides: Partial<GreetingKey> = {}): GreetingKey => ({
  agentId: 'agent-1',
  agentVersion: 3,
  voice: { provider: 'openai', model: 'gpt-4o-mini-tts', voice: 'meera', speed: 1, language: 'en-IN' },
  text: 'Hello, this is Asha.',
  ...overrides,
});
const whole = (bytes: number) => GreetingAudio.whole([Buffer.alloc(bytes, 1)]);

/** A synthesizer of 24 kHz PCM (two pieces of 100 ms), counting its requests. */
function countingSynthesizer() {
  const requests: SpeechRequest[] = [];
  const synthesizer: Synthesizer = {
    async *synthesize(request: SpeechRequest) {
      requests.push(request);
      yield Buffer.alloc(4_800); // 100 ms at 24 kHz, 16-bit
      yield Buffer.alloc(4_800);
    },
    listVoices: async () => [],
  } as unknown as Synthesizer;
  return { synthesizer, requests };
}

describe('prepared welcomes (docs/decisions/0221)', () => {
  it('keeps a welcome per agent version, voice and text', () => {
    const cache = new GreetingCache({ maxEntries: 10, maxBytes: 1_000_000 });
    cache.set(key(), whole(800));
    expect(cache.get(key())?.chunks[0]?.length).to.equal(800);
    expect(cache.get(key({ agentVersion: 4 }))).to.equal(null);
    expect(cache.get(key({ voice: { ...key().voice, speed: 1.2 } }))).to.equal(null);
    expect(cache.get(key({ text: 'Hello, this is Asha!' }))).to.equal(null);
    expect(cache.get(key({ agentId: 'agent-2' }))).to.equal(null);
  });

  it('is bounded by entries and by bytes, the least recently used going first', () => {
    const cache = new GreetingCache({ maxEntries: 2, maxBytes: 1_000 });
    cache.set(key({ text: 'a' }), whole(300));
    cache.set(key({ text: 'b' }), whole(300));
    cache.get(key({ text: 'a' })); // a used again: b is now the oldest
    cache.set(key({ text: 'c' }), whole(300));
    expect(cache.size).to.equal(2);
    expect(cache.get(key({ text: 'b' }))).to.equal(null);
    expect(cache.get(key({ text: 'a' }))).to.not.equal(null);
    cache.set(key({ text: 'd' }), whole(900)); // over the bytes with either of the others
    expect(cache.size).to.equal(1);
    expect(cache.get(key({ text: 'd' }))).to.not.equal(null);
    cache.set(key({ text: 'e' }), whole(1_001)); // larger than the whole cache: never kept
    expect(cache.get(key({ text: 'e' }))).to.equal(null);
  });

  it('synthesizes a welcome once, streams it to its first call, and serves the next from the cache', async () => {
    const cache = new GreetingCache();
    const { synthesizer, requests } = countingSynthesizer();
    const first = prepareGreeting(cache, synthesizer, key(), new AbortController().signal);
    expect(first.synthesized).to.equal(true);
    const played: Buffer[] = [];
    for await (const chunk of first.read()) played.push(chunk);
    expect(played.reduce((n, c) => n + c.length, 0)).to.equal(1_600); // 200 ms of mu-law at 8 kHz
    const second = prepareGreeting(cache, synthesizer, key(), new AbortController().signal);
    expect(second.synthesized).to.equal(false);
    expect(second.bytes).to.equal(1_600);
    expect(requests).to.have.length(1);
  });

  it('never caches a welcome whose synthesis failed or was stopped', async () => {
    const cache = new GreetingCache();
    const failing = {
      // eslint-disable-next-line require-yield
      async *synthesize() {
        throw new Error('speech server down');
      },
    } as unknown as Synthesizer;
    const audio = prepareGreeting(cache, failing, key(), new AbortController().signal);
    let failure: unknown = null;
    try {
      for await (const _ of audio.read()) void _;
    } catch (error) {
      failure = error;
    }
    expect((failure as Error).message).to.equal('speech server down');
    const stopped = new AbortController();
    stopped.abort();
    const { synthesizer } = countingSynthesizer();
    prepareGreeting(cache, synthesizer, key({ text: 'stopped' }), stopped.signal);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cache.size).to.equal(0);
  });

  /** A synthesizer that yields one piece, then waits for `release` before the second: a synthesis held under way. */
  function gatedSynthesizer() {
    const requests: SpeechRequest[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const synthesizer = {
      async *synthesize(request: SpeechRequest) {
        requests.push(request);
        yield Buffer.alloc(4_800);
        await Promise.race([gate, new Promise((resolve) => request.signal?.addEventListener('abort', resolve, { once: true }))]);
        if (request.signal?.aborted) return;
        yield Buffer.alloc(4_800);
      },
      listVoices: async () => [],
    } as unknown as Synthesizer;
    return { synthesizer, requests, release: () => release() };
  }
  const readAll = async (audio: GreetingAudio) => {
    let bytes = 0;
    for await (const chunk of audio.read()) bytes += chunk.length;
    return bytes;
  };

  it('calls arriving while a welcome is being synthesized join that synthesis: one request, each call hears it whole, only the first is billed', async () => {
    const cache = new GreetingCache();
    const { synthesizer, requests, release } = gatedSynthesizer();
    const first = prepareGreeting(cache, synthesizer, key(), new AbortController().signal);
    const second = prepareGreeting(cache, synthesizer, key(), new AbortController().signal);
    const third = prepareGreeting(cache, synthesizer, key(), new AbortController().signal);
    expect([first.synthesized, second.synthesized, third.synthesized]).to.deep.equal([true, false, false]);
    const reading = Promise.all([first, second, third].map(readAll));
    await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    expect(await reading).to.deep.equal([1_600, 1_600, 1_600]);
    expect(requests).to.have.length(1);
    expect(cache.size).to.equal(1);
    expect(cache.underWay.size).to.equal(0);
  });

  it('a synthesis stops only when no call wants it any more: the first caller hanging up does not cut the others', async () => {
    const cache = new GreetingCache();
    const { synthesizer, requests, release } = gatedSynthesizer();
    const firstCall = new AbortController();
    const secondCall = new AbortController();
    prepareGreeting(cache, synthesizer, key(), firstCall.signal);
    const second = prepareGreeting(cache, synthesizer, key(), secondCall.signal);
    await new Promise((resolve) => setTimeout(resolve, 5));
    firstCall.abort();
    expect(requests[0]!.signal!.aborted).to.equal(false);
    release();
    expect(await readAll(second)).to.equal(1_600);

    const gated = gatedSynthesizer();
    const a = new AbortController();
    const b = new AbortController();
    const left = prepareGreeting(cache, gated.synthesizer, key({ text: 'Both leave.' }), a.signal);
    prepareGreeting(cache, gated.synthesizer, key({ text: 'Both leave.' }), b.signal);
    await new Promise((resolve) => setTimeout(resolve, 5));
    a.abort();
    b.abort();
    expect(gated.requests[0]!.signal!.aborted).to.equal(true);
    let failure: unknown = null;
    try {
      await readAll(left);
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.an.instanceOf(Error);
    expect(cache.get(key({ text: 'Both leave.' }))).to.equal(null);
  });
});
