import { synthesizeMulaw } from '../../providers/tts/telephone-audio';
import type { Synthesizer } from '../../providers/tts/types';
import { welcomeKeyText, type WelcomeKey } from '../../domain/calls/prepared-welcome';

/**
 * The welcome ready before it is needed (issue 32, docs/decisions/0221): its audio is
 * synthesized as soon as the node knows the call, alongside the rest of the conversation's
 * start (the recognizer's handshake), and kept, once whole, per agent version, voice and text
 * in a bounded cache, so that a welcome the same for many calls plays at once from memory.
 */

/** What makes two welcomes sound the same: the agent's version, its voice, and the filled-in text (the key a welcome prepared while the phone rang has too). */
export type GreetingKey = WelcomeKey;

/** The audio itself and whoever waits for more of it: shared by every call that plays one synthesis. */
class GreetingSource {
  readonly chunks: Buffer[] = [];
  finished = false;
  failure: unknown = null;
  private waiters: (() => void)[] = [];

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.notify();
  }

  end(failure: unknown = null): void {
    this.finished = true;
    this.failure = failure;
    this.notify();
  }

  async *read(): AsyncIterable<Buffer> {
    for (let next = 0; ;) {
      while (next < this.chunks.length) yield this.chunks[next++]!;
      if (this.failure !== null) throw this.failure;
      if (this.finished) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * One welcome's audio (mu-law, 8 kHz), as one call plays it, playable while it is still being
 * synthesized: a reader gets the pieces there are, then each new one as it arrives. Several
 * calls may read one synthesis at once (`shared`).
 */
export class GreetingAudio {
  /** `synthesized`: the speech server was asked for it for this call (false: from the cache, or another call's synthesis). */
  constructor(
    readonly synthesized: boolean,
    private readonly source = new GreetingSource(),
  ) {}

  /** Audio already whole: from the cache, or (`synthesized`) made for this very call while its phone rang (docs/decisions/0228). */
  static whole(chunks: Buffer[], synthesized = false): GreetingAudio {
    const audio = new GreetingAudio(synthesized);
    audio.source.chunks.push(...chunks);
    audio.source.finished = true;
    return audio;
  }

  /** The same audio for another call, which did not ask the speech server for it. */
  shared(): GreetingAudio {
    return new GreetingAudio(false, this.source);
  }

  get chunks(): Buffer[] {
    return this.source.chunks;
  }

  get complete(): boolean {
    return this.source.finished && this.source.failure === null;
  }

  get bytes(): number {
    return this.source.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  }

  push(chunk: Buffer): void {
    this.source.push(chunk);
  }

  end(failure: unknown = null): void {
    this.source.end(failure);
  }

  read(): AsyncIterable<Buffer> {
    return this.source.read();
  }
}

/**
 * A welcome being synthesized, with the calls that wait for it: it stops only when every one
 * of them has stopped wanting it (their signals), so a caller who hangs up early does not cut
 * the welcome of the calls that joined.
 */
class SynthesisUnderWay {
  readonly stop = new AbortController();
  private wanted = 0;

  constructor(readonly audio: GreetingAudio) {}

  join(signal: AbortSignal): void {
    this.wanted++;
    const leave = () => {
      if (--this.wanted === 0) this.stop.abort();
    };
    if (signal.aborted) leave();
    else signal.addEventListener('abort', leave, { once: true });
  }
}

export interface GreetingCacheLimits {
  /** Welcomes kept at most (the least recently used goes first). */
  maxEntries: number;
  /** Audio kept at most, in bytes of mu-law (8 000 a second). */
  maxBytes: number;
}

/** A node's default: 500 welcomes or 32 MB of audio (about 70 minutes), whichever comes first. */
export const DEFAULT_GREETING_CACHE_LIMITS: GreetingCacheLimits = { maxEntries: 500, maxBytes: 32 * 1024 * 1024 };

/** Whole welcomes by GreetingKey, least recently used first out, within GreetingCacheLimits; and those being synthesized. */
export class GreetingCache {
  private readonly entries = new Map<string, Buffer[]>();
  private bytes = 0;
  /** Welcomes being synthesized now, by key: a call that wants one joins it instead of asking again. */
  readonly underWay = new Map<string, SynthesisUnderWay>();

  constructor(private readonly limits: GreetingCacheLimits = DEFAULT_GREETING_CACHE_LIMITS) {}

  get size(): number {
    return this.entries.size;
  }

  /** This node has the welcome, or is making it: no need to look elsewhere. */
  holds(key: GreetingKey): boolean {
    const id = keyOf(key);
    return this.entries.has(id) || this.underWay.has(id);
  }

  get(key: GreetingKey): GreetingAudio | null {
    const id = keyOf(key);
    const chunks = this.entries.get(id);
    if (!chunks) return null;
    // Used again: to the back of the line.
    this.entries.delete(id);
    this.entries.set(id, chunks);
    return GreetingAudio.whole(chunks);
  }

  set(key: GreetingKey, audio: GreetingAudio): void {
    const size = audio.bytes;
    if (!audio.complete || size > this.limits.maxBytes) return;
    const id = keyOf(key);
    this.remove(id);
    this.entries.set(id, audio.chunks);
    this.bytes += size;
    for (const [oldest] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.remove(oldest);
    }
  }

  private remove(id: string): void {
    const chunks = this.entries.get(id);
    if (!chunks) return;
    this.entries.delete(id);
    this.bytes -= chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  }
}

const keyOf = welcomeKeyText;

/**
 * The welcome's audio for this call: from the cache; or joined to the same welcome's synthesis
 * already under way for another call (calls of one agent arriving together ask the speech
 * server once); or synthesized now (streamed to whoever plays it, and cached once whole).
 * `signal` says this call no longer wants it; the synthesis stops once no call does.
 */
export function prepareGreeting(cache: GreetingCache, synthesizer: Synthesizer, key: GreetingKey, signal: AbortSignal): GreetingAudio {
  const cached = cache.get(key);
  if (cached) return cached;
  const id = keyOf(key);
  const underWay = cache.underWay.get(id);
  if (underWay) {
    underWay.join(signal);
    return underWay.audio.shared();
  }
  const audio = new GreetingAudio(true);
  const synthesis = new SynthesisUnderWay(audio);
  synthesis.join(signal);
  cache.underWay.set(id, synthesis);
  void (async () => {
    const stop = synthesis.stop.signal;
    try {
      const { voice, model, speed, language } = key.voice;
      for await (const mulaw of synthesizeMulaw(synthesizer, { text: key.text, voice, model, speed, language, signal: stop })) audio.push(mulaw);
      // Stopped midway, an adapter may end quietly: such a welcome is not whole and never cached.
      if (stop.aborted) throw new Error('the welcome was no longer wanted');
      audio.end();
      cache.set(key, audio);
    } catch (error) {
      audio.end(error);
    } finally {
      cache.underWay.delete(id);
    }
  })();
  return audio;
}
