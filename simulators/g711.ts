/**
 * G.711 mu-law (ITU-T G.711, the telephony streams' audio) for the simulators, written from the
 * standard apart from the service's codec (providers/audio/mulaw.ts): a simulated caller or
 * speech service that shared the service's codec would agree with its mistakes.
 */

const BIAS = 0x84;
const MAX_MAGNITUDE = 0x7f7b; // 32635: the largest magnitude before the bias overflows 15 bits

/** The 16-bit linear sample a mu-law byte stands for. */
export function ulawToSample(byte: number): number {
  const u = ~byte & 0xff;
  const segment = (u & 0x70) >> 4;
  const magnitude = (((u & 0x0f) << 3) + BIAS) * (1 << segment) - BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

/** The mu-law byte of a 16-bit linear sample. */
export function sampleToUlaw(sample: number): number {
  const clamped = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const negative = clamped < 0;
  const biased = Math.min(Math.abs(clamped), MAX_MAGNITUDE) + BIAS;
  // The segment is the position of the highest set bit above bit 7 (0 to 7).
  const segment = Math.max(0, Math.min(7, Math.floor(Math.log2(biased)) - 7));
  const step = (biased >> (segment + 3)) & 0x0f;
  return ~((negative ? 0x80 : 0) | (segment << 4) | step) & 0xff;
}

const DECODED = Int16Array.from({ length: 256 }, (_, byte) => ulawToSample(byte));

/** Mu-law bytes decoded into `into` from index `at`. */
export function decodeUlawInto(bytes: Uint8Array, into: Int16Array | Float64Array, at: number): void {
  for (let i = 0; i < bytes.length; i++) into[at + i] = DECODED[bytes[i]!]!;
}

/** Every 16-bit sample's mu-law byte, by the sample's two's-complement bits; built on first use. */
let encoded: Uint8Array | null = null;

/** 16-bit samples as mu-law bytes. */
export function encodeUlaw(samples: Int16Array): Buffer {
  encoded ??= Uint8Array.from({ length: 65536 }, (_, bits) => sampleToUlaw((bits << 16) >> 16));
  const out = Buffer.allocUnsafe(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = encoded[samples[i]! & 0xffff]!;
  return out;
}

/** The mu-law byte of silence. */
export const ULAW_SILENCE = 0xff;

/**
 * Index of the first sample of `bytes` louder than `threshold` (16-bit linear magnitude), or -1
 * when none is: where a listener first hears something.
 */
export function firstLoudSample(bytes: Uint8Array, threshold: number): number {
  for (let i = 0; i < bytes.length; i++) if (Math.abs(DECODED[bytes[i]!]!) > threshold) return i;
  return -1;
}
