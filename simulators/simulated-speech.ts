import { decodeUlawInto } from './g711';

/**
 * The simulators' "speech": text carried in audio as tones, so that simulated callers,
 * speech recognition and speech synthesis exchange real audio through the real paths
 * (mu-law over the telephony stream, 24 kHz PCM from synthesis, a browser microphone) and
 * a recognizer can still tell what was said.
 *
 * Each UTF-8 byte of the text is four tones: its high nibble, a "high" marker, its low
 * nibble, a "low" marker. The markers keep the decoder in step (a tone lost in noise costs
 * one character, never the rest) and make two equal nibbles in a row distinct. A tone lasts
 * 20 ms at speed 1, so a character takes 80 ms (about 12 characters a second, the pace of
 * speech); `speed` shortens or lengthens it like a voice's speaking rate. Silence is silence.
 * Tones sit between 400 and 3460 Hz, inside the telephone band, and survive mu-law,
 * resampling and a browser's audio path, which byte-exact tricks would not.
 */

/** 16 nibble tones, then the high and low markers (a multiple of 3: the decoder runs three filters at a time). */
const TONE_COUNT = 18;
const FIRST_TONE_HZ = 400;
const TONE_SPACING_HZ = 180;
const HIGH_MARKER = 16;
const LOW_MARKER = 17;
const TONE_MS = 20;
const AMPLITUDE = 6000;

export const toneHz = (index: number): number => FIRST_TONE_HZ + TONE_SPACING_HZ * index;

/** How long `text` takes to say at `speed` (1 is normal), in milliseconds. */
export function speechDurationMs(text: string, speed = 1): number {
  return Buffer.byteLength(text, 'utf8') * 4 * (TONE_MS / speed);
}

/** `text` as 16-bit samples at `sampleRate`, spoken at `speed` (0.5 to 2). */
export function speakText(text: string, options: { sampleRate: number; speed?: number }): Int16Array {
  const speed = options.speed ?? 1;
  if (!(speed >= 0.25 && speed <= 4)) throw new Error('speed must be between 0.25 and 4');
  const toneSamples = Math.max(1, Math.round((options.sampleRate * TONE_MS) / 1000 / speed));
  const bytes = Buffer.from(text, 'utf8');
  const out = new Int16Array(bytes.length * 4 * toneSamples);
  const tones: number[] = [];
  for (const byte of bytes) tones.push(byte >> 4, HIGH_MARKER, byte & 0x0f, LOW_MARKER);
  let at = 0;
  let phase = 0;
  for (const index of tones) {
    const step = (2 * Math.PI * toneHz(index)) / options.sampleRate;
    // sin(phase) by rotating a unit vector a step per sample (Math.sin per sample made long
    // sentences cost milliseconds); it restarts exactly at each tone, so its error stays
    // many orders below the rounding to 16 bits. The phase itself is kept as before.
    const cosStep = Math.cos(step);
    const sinStep = Math.sin(step);
    let sin = Math.sin(phase);
    let cos = Math.cos(phase);
    for (let i = 0; i < toneSamples; i++) {
      out[at++] = Math.round(AMPLITUDE * sin);
      const next = sin * cosStep + cos * sinStep;
      cos = cos * cosStep - sin * sinStep;
      sin = next;
      phase += step;
    }
    phase %= 2 * Math.PI;
  }
  return out;
}

/** What the decoder heard in one push. */
export interface HeardAudio {
  /** Characters completed by this push (may be empty). */
  text: string;
  /** True when the push held any speech (tones), even without a whole character yet. */
  voiced: boolean;
  /** Milliseconds of silence at the end of everything pushed so far. */
  trailingSilenceMs: number;
}

/** Analysis window and hop: 10 ms windows every 2.5 ms, so every tone has a clean window. */
const WINDOW_MS = 10;
const HOP_MS = 2.5;
/** Mean square below this is silence (the tones' is about AMPLITUDE^2 / 2). */
const SILENCE_POWER = (AMPLITUDE * AMPLITUDE) / 2 / 50;

/**
 * Streaming decoder of simulated speech at `sampleRate` (8000 for telephony audio). Push
 * samples in any chunking; it answers the characters completed so far and how long the
 * audio has been silent, which is what a recognizer needs for words and end of turn.
 */
export class SpeechDecoder {
  private readonly window: number;
  private readonly hop: number;
  private readonly coefficients: Float64Array;
  /**
   * Samples not yet analysed (fewer than a window plus a hop after each push), as doubles:
   * converted once rather than once per tone of every window that covers them.
   */
  private pending = new Float64Array(0);
  private pendingLength = 0;
  private lastTone = -1;
  private highNibble: number | null = null;
  private pendingNibble: number | null = null;
  private silentSamples = 0;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: false });

  constructor(private readonly sampleRate: number) {
    this.window = Math.round((sampleRate * WINDOW_MS) / 1000);
    this.hop = Math.max(1, Math.round((sampleRate * HOP_MS) / 1000));
    this.coefficients = new Float64Array(TONE_COUNT);
    for (let k = 0; k < TONE_COUNT; k++) this.coefficients[k] = 2 * Math.cos((2 * Math.PI * toneHz(k)) / sampleRate);
  }

  push(samples: Int16Array): HeardAudio {
    this.append(samples.length, (into, at) => into.set(samples, at));
    return this.analyse();
  }

  /** As push, for mu-law bytes (telephony audio): decoded straight into the decoder's own store. */
  pushMulaw(mulaw: Uint8Array): HeardAudio {
    this.append(mulaw.length, (into, at) => decodeUlawInto(mulaw, into, at));
    return this.analyse();
  }

  private analyse(): HeardAudio {
    const all = this.pending;
    const length = this.pendingLength;
    const bytes: number[] = [];
    let voiced = false;
    let start = 0;
    for (; start + this.window <= length; start += this.hop) {
      const tone = this.dominantTone(all, start);
      if (tone === -1) {
        this.silentSamples += this.hop;
        this.lastTone = -1;
        continue;
      }
      voiced = true;
      this.silentSamples = 0;
      if (tone === this.lastTone) continue;
      this.lastTone = tone;
      const byte = this.take(tone);
      if (byte !== null) bytes.push(byte);
    }
    all.copyWithin(0, start, length);
    this.pendingLength = length - start;
    return {
      text: bytes.length ? this.utf8.decode(Uint8Array.from(bytes), { stream: true }) : '',
      voiced,
      trailingSilenceMs: (this.silentSamples * 1000) / this.sampleRate,
    };
  }

  /** Makes room for `count` more samples after the pending ones, and lets `write` put them there. */
  private append(count: number, write: (into: Float64Array, at: number) => void): void {
    const length = this.pendingLength + count;
    if (length > this.pending.length) {
      const grown = new Float64Array(Math.max(length, 2 * this.pending.length));
      grown.set(this.pending.subarray(0, this.pendingLength));
      this.pending = grown;
    }
    write(this.pending, this.pendingLength);
    this.pendingLength = length;
  }

  /** A new tone: nibbles wait for their marker, which says whether they are high or low. */
  private take(tone: number): number | null {
    if (tone < 16) {
      this.pendingNibble = tone;
      return null;
    }
    const nibble = this.pendingNibble;
    this.pendingNibble = null;
    if (nibble === null) return null;
    if (tone === HIGH_MARKER) {
      this.highNibble = nibble;
      return null;
    }
    const high = this.highNibble;
    this.highNibble = null;
    return high === null ? null : (high << 4) | nibble;
  }

  /** The tone with the most energy in the window (Goertzel), or -1 for silence. */
  private dominantTone(samples: Float64Array, start: number): number {
    const end = start + this.window;
    let power = 0;
    for (let i = start; i < end; i++) power += samples[i]! * samples[i]!;
    if (power / this.window < SILENCE_POWER) return -1;
    const coefficients = this.coefficients;
    let best = -1;
    let bestEnergy = 0;
    // Three tones per pass over the window: each filter is a chain of dependent steps, and
    // three independent chains side by side keep the processor busy (the same arithmetic,
    // the same energies).
    for (let k = 0; k < TONE_COUNT; k += 3) {
      const ca = coefficients[k]!;
      const cb = coefficients[k + 1]!;
      const cc = coefficients[k + 2]!;
      let a1 = 0;
      let a2 = 0;
      let b1 = 0;
      let b2 = 0;
      let c1 = 0;
      let c2 = 0;
      for (let i = start; i < end; i++) {
        const x = samples[i]!;
        const a0 = x + ca * a1 - a2;
        const b0 = x + cb * b1 - b2;
        const c0 = x + cc * c1 - c2;
        a2 = a1;
        a1 = a0;
        b2 = b1;
        b1 = b0;
        c2 = c1;
        c1 = c0;
      }
      const energies = [a1 * a1 + a2 * a2 - ca * a1 * a2, b1 * b1 + b2 * b2 - cb * b1 * b2, c1 * c1 + c2 * c2 - cc * c1 * c2];
      for (let j = 0; j < 3; j++) {
        if (energies[j]! > bestEnergy) {
          bestEnergy = energies[j]!;
          best = k + j;
        }
      }
    }
    return best;
  }
}
