/**
 * G.711 mu-law, the telephony audio format (8 kHz, one byte a sample). Encoding is by the
 * standard segment search (tabulated for whole buffers); decoding through a 256-entry table.
 */

const BIAS = 0x84;
const CLIP = 32635;

/** One 16-bit sample to its mu-law byte. */
export function linearToMulaw(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

const DECODE_TABLE = (() => {
  const table = new Int16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    const u = ~byte & 0xff;
    const exponent = (u >> 4) & 0x07;
    const magnitude = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
    table[byte] = u & 0x80 ? -magnitude : magnitude;
  }
  return table;
})();

export function mulawToLinear(byte: number): number {
  return DECODE_TABLE[byte & 0xff]!;
}

/** The mu-law byte of every 16-bit sample, indexed by the sample's two's-complement bits; built on first use (64 KB). */
let encodeTable: Uint8Array | null = null;

function buildEncodeTable(): Uint8Array {
  const table = new Uint8Array(65536);
  for (let sample = -32768; sample <= 32767; sample++) table[sample & 0xffff] = linearToMulaw(sample);
  return table;
}

/** 16-bit samples to mu-law bytes (by table: agent audio is encoded as fast as synthesis streams it). */
export function encodeMulaw(samples: Int16Array): Buffer {
  const table = (encodeTable ??= buildEncodeTable());
  const out = Buffer.allocUnsafe(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = table[samples[i]! & 0xffff]!;
  return out;
}

/** Mu-law bytes to 16-bit samples. */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  decodeMulawInto(bytes, out, 0);
  return out;
}

/** Mu-law bytes decoded into `into` from index `at` (a caller's own store: no buffer per frame). */
export function decodeMulawInto(bytes: Uint8Array, into: Int16Array | Float64Array, at: number): void {
  for (let i = 0; i < bytes.length; i++) into[at + i] = DECODE_TABLE[bytes[i]!]!;
}

/** The mu-law byte of silence (zero amplitude). */
export const MULAW_SILENCE = 0xff;

/** Mu-law silence lasting `ms` at 8 kHz. */
export function mulawSilence(ms: number): Buffer {
  return Buffer.alloc(Math.round((ms * 8000) / 1000), MULAW_SILENCE);
}
