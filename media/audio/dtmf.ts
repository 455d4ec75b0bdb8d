import { encodeMulaw } from '../../providers/audio/mulaw';

/**
 * Keypad digits as standard DTMF tones (ITU-T Q.23): each key is the sum of one "row" and one
 * "column" sine, played in-band on the call's audio, mu-law at 8 kHz, which is what a phone
 * menu at the far end listens for. A digit is a 100 ms tone followed by 70 ms of silence (Q.24
 * asks for at least 40 ms of each); `w` is a 0.5 s pause and `W` a 1 s pause (Plivo's
 * convention for `SendDigits`).
 */

export const DTMF_SAMPLE_RATE = 8000;
export const DTMF_TONE_MS = 100;
export const DTMF_GAP_MS = 70;
const SHORT_PAUSE_MS = 500;
const LONG_PAUSE_MS = 1000;
/** Each sine's peak: the pair peaks at 16000 of 32767, about -6 dBFS, well clear of clipping. */
const AMPLITUDE = 8000;

/** What `press_digits` takes: digits, `*`, `#`, and the pauses `w` / `W`, 1 to 40 characters. */
export const DIGITS_PATTERN = /^[0-9*#wW]{1,40}$/;

const ROWS_HZ = [697, 770, 852, 941] as const;
const COLUMNS_HZ = [1209, 1336, 1477, 1633] as const;
const KEYPAD = ['123A', '456B', '789C', '*0#D'] as const;

/** The row and column frequencies of a key (`0-9`, `*`, `#`, `A-D`), or null. */
export function dtmfFrequencies(key: string): [number, number] | null {
  for (let row = 0; row < KEYPAD.length; row++) {
    const column = KEYPAD[row]!.indexOf(key);
    if (key.length === 1 && column !== -1) return [ROWS_HZ[row]!, COLUMNS_HZ[column]!];
  }
  return null;
}

/** How long `digits` take to play, in milliseconds. */
export function dtmfDurationMs(digits: string): number {
  let ms = 0;
  for (const key of digits) ms += key === 'w' ? SHORT_PAUSE_MS : key === 'W' ? LONG_PAUSE_MS : DTMF_TONE_MS + DTMF_GAP_MS;
  return ms;
}

/** `digits` (see DIGITS_PATTERN) as 16-bit samples at 8 kHz; throws for anything else. */
export function dtmfSamples(digits: string): Int16Array {
  if (!DIGITS_PATTERN.test(digits)) throw new Error(`not keypad digits: ${JSON.stringify(digits)}`);
  const out = new Int16Array((dtmfDurationMs(digits) * DTMF_SAMPLE_RATE) / 1000);
  const toneSamples = (DTMF_TONE_MS * DTMF_SAMPLE_RATE) / 1000;
  let at = 0;
  for (const key of digits) {
    const pair = dtmfFrequencies(key);
    if (pair) {
      const [low, high] = pair.map((hz) => (2 * Math.PI * hz) / DTMF_SAMPLE_RATE) as [number, number];
      for (let i = 0; i < toneSamples; i++) out[at + i] = Math.round(AMPLITUDE * (Math.sin(low * i) + Math.sin(high * i)));
    }
    // The rest of the key's time is silence (zeros): the gap, or the whole pause.
    at += (dtmfDurationMs(key) * DTMF_SAMPLE_RATE) / 1000;
  }
  return out;
}

/** `digits` as mu-law at 8 kHz, ready for the call's audio stream. */
export function dtmfMulaw(digits: string): Buffer {
  return encodeMulaw(dtmfSamples(digits));
}
