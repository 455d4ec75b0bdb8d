import { endianness } from 'node:os';

/**
 * 16-bit PCM helpers: little-endian byte buffers as the speech servers send them, and a
 * streaming integer-factor downsampler (24 kHz synthesis to 8 kHz telephony audio).
 */

/** Typed arrays use the machine's byte order: on little-endian machines (all we run on) bytes and samples convert by plain copies. */
const LITTLE_ENDIAN = endianness() === 'LE';

/** Little-endian 16-bit bytes to samples; an odd trailing byte is ignored (callers keep it). */
export function pcm16FromBytes(bytes: Uint8Array): Int16Array {
  const count = bytes.length >> 1;
  const out = new Int16Array(count);
  if (LITTLE_ENDIAN) {
    new Uint8Array(out.buffer).set(bytes.subarray(0, count * 2));
    return out;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

export function pcm16ToBytes(samples: Int16Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  const out = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}

/**
 * Downsamples a stream of 16-bit samples by an integer factor, averaging each group (a box
 * filter, enough against aliasing for speech-band audio). Bytes and samples left over
 * between chunks are carried to the next one, so chunk boundaries change nothing.
 */
export class Downsampler {
  private pendingByte: number | null = null;
  /** Samples of an unfinished group (fewer than `factor`). */
  private readonly carry: Int16Array;
  private carried = 0;

  constructor(private readonly factor: number) {
    if (!Number.isInteger(factor) || factor < 1) throw new Error('the downsampling factor must be a positive integer');
    this.carry = new Int16Array(factor);
  }

  /** Takes little-endian PCM bytes (any split) and answers the downsampled samples. */
  pushBytes(bytes: Uint8Array): Int16Array {
    let input = bytes;
    if (this.pendingByte !== null) {
      input = Buffer.concat([Buffer.from([this.pendingByte]), bytes]);
      this.pendingByte = null;
    }
    if (input.length % 2 === 1) {
      this.pendingByte = input[input.length - 1]!;
      input = input.subarray(0, input.length - 1);
    }
    // Straight from the bytes when they sit on a sample boundary (synthesis streams come as
    // Buffers at any offset): no copy of every piece of agent audio.
    return this.push(LITTLE_ENDIAN && input.byteOffset % 2 === 0 ? new Int16Array(input.buffer, input.byteOffset, input.length / 2) : pcm16FromBytes(input));
  }

  push(samples: Int16Array): Int16Array {
    const { factor, carry } = this;
    const out = new Int16Array(Math.floor((this.carried + samples.length) / factor));
    let written = 0;
    let from = 0;
    if (this.carried > 0) {
      const missing = factor - this.carried;
      if (samples.length < missing) {
        carry.set(samples, this.carried);
        this.carried += samples.length;
        return out;
      }
      let sum = 0;
      for (let j = 0; j < this.carried; j++) sum += carry[j]!;
      for (let j = 0; j < missing; j++) sum += samples[j]!;
      out[written++] = Math.round(sum / factor);
      from = missing;
    }
    for (; from + factor <= samples.length; from += factor) {
      let sum = 0;
      for (let j = 0; j < factor; j++) sum += samples[from + j]!;
      out[written++] = Math.round(sum / factor);
    }
    carry.set(samples.subarray(from));
    this.carried = samples.length - from;
    return out;
  }
}
