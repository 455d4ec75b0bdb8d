import { decodeUlawInto } from './g711';

/**
 * Recognises keypad digits (DTMF, ITU-T Q.23) in 8 kHz audio, as a phone menu does: the
 * telephony simulator's callee runs it on what it hears, so an agent's `press_digits` tones
 * are checked by something independent of the code that made them.
 *
 * The audio is cut into blocks of 20 ms (160 samples; the stream's frames, when fed frame by
 * frame). In each block a Goertzel filter measures the eight DTMF frequencies. A block is a
 * key's tone when the strongest row and the strongest column frequency each carry a fair
 * share of the block's energy and together nearly all of it, within 8 dB of each other: one
 * sine (the simulators' speech is one tone at a time), noise, or several tones fail that. A
 * key counts once it holds for two blocks in a row (40 ms; tones last 100 ms, the simulators'
 * speech tones 20 ms), and again only after a block without it.
 */

const SAMPLE_RATE = 8000;
const BLOCK = 160;
const ROWS_HZ = [697, 770, 852, 941];
const COLUMNS_HZ = [1209, 1336, 1477, 1633];
const KEYPAD = ['123A', '456B', '789C', '*0#D'];
/** A block quieter than this mean square (about -50 dBFS) is silence. */
const MIN_POWER = 100 * 100;
/** The row's and the column's share of the block's energy, each at least, and together at least. */
const MIN_SHARE = 0.25;
const MIN_PAIR_SHARE = 0.8;
/** The row and column may differ by at most this factor of energy (8 dB, "twist"). */
const MAX_TWIST = 6.3;
/** Blocks in a row a key must hold to count. */
const CONFIRM_BLOCKS = 2;

const COEFFICIENTS = [...ROWS_HZ, ...COLUMNS_HZ].map((hz) => 2 * Math.cos((2 * Math.PI * hz) / SAMPLE_RATE));

/** What one push found. */
export interface DetectedDigits {
  /** Keys recognised in this push, in order (may be empty). */
  digits: string;
  /** The last whole block of this push was a key's tone (its audio is no speech). */
  tone: boolean;
}

export class DtmfDetector {
  private readonly block = new Float64Array(BLOCK);
  private filled = 0;
  private candidate: string | null = null;
  private held = 0;
  /** The key already reported for the tone under way (reported once). */
  private reported: string | null = null;

  /** 16-bit samples at 8 kHz, in any chunking. */
  push(samples: Int16Array): DetectedDigits {
    return this.feed(samples.length, (into, from, count, at) => into.set(samples.subarray(from, from + count), at));
  }

  /** Mu-law bytes at 8 kHz (the telephony stream's audio). */
  pushMulaw(mulaw: Uint8Array): DetectedDigits {
    return this.feed(mulaw.length, (into, from, count, at) => decodeUlawInto(mulaw.subarray(from, from + count), into, at));
  }

  private feed(length: number, copy: (into: Float64Array, from: number, count: number, at: number) => void): DetectedDigits {
    let digits = '';
    let tone = false;
    for (let from = 0; from < length;) {
      const count = Math.min(BLOCK - this.filled, length - from);
      copy(this.block, from, count, this.filled);
      this.filled += count;
      from += count;
      if (this.filled < BLOCK) break;
      this.filled = 0;
      const key = blockKey(this.block);
      tone = key !== null;
      const digit = this.track(key);
      if (digit) digits += digit;
    }
    return { digits, tone };
  }

  /** Follows the key of each block; answers a key when it has held long enough, once per tone. */
  private track(key: string | null): string | null {
    if (key !== this.candidate) {
      this.candidate = key;
      this.held = 0;
      this.reported = null;
    }
    if (key === null) return null;
    this.held++;
    if (this.held >= CONFIRM_BLOCKS && this.reported !== key) {
      this.reported = key;
      return key;
    }
    return null;
  }
}

/** The key whose tone fills the block, or null (see the class comment). */
export function blockKey(block: Float64Array): string | null {
  let power = 0;
  for (let i = 0; i < block.length; i++) power += block[i]! * block[i]!;
  if (power / block.length < MIN_POWER) return null;
  // A pure sine's Goertzel energy is (A·N/2)², its block energy A²·N/2: share = 2·energy / (N·power).
  const shares = COEFFICIENTS.map((c) => (2 * goertzel(block, c)) / (block.length * power));
  const row = strongest(shares, 0);
  const column = strongest(shares, 4);
  const rowShare = shares[row]!;
  const columnShare = shares[4 + column]!;
  if (rowShare < MIN_SHARE || columnShare < MIN_SHARE || rowShare + columnShare < MIN_PAIR_SHARE) return null;
  if (Math.max(rowShare, columnShare) / Math.min(rowShare, columnShare) > MAX_TWIST) return null;
  return KEYPAD[row]![column]!;
}

function strongest(shares: number[], from: number): number {
  let best = 0;
  for (let i = 1; i < 4; i++) if (shares[from + i]! > shares[from + best]!) best = i;
  return best;
}

function goertzel(block: Float64Array, coefficient: number): number {
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < block.length; i++) {
    const s0 = block[i]! + coefficient * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coefficient * s1 * s2;
}
