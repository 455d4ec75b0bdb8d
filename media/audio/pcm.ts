/**
 * 16-bit PCM helpers: little-endian byte buffers as the speech servers send them, and a
 * streaming integer-factor downsampler (24 kHz synthesis to 8 kHz telephony audio).
 */

/** Little-endian 16-bit bytes to samples; an odd trailing byte is ignored (callers keep it). */
export function pcm16FromBytes(bytes: Uint8Array): Int16Array {
  const count = bytes.length >> 1;
  const out = new Int16Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

export function pcm16ToBytes(samples: Int16Array): Buffer {
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
  private readonly carry: number[] = [];

  constructor(private readonly factor: number) {
    if (!Number.isInteger(factor) || factor < 1) throw new Error('the downsampling factor must be a positive integer');
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
    return this.push(pcm16FromBytes(input));
  }

  push(samples: Int16Array): Int16Array {
    const all = this.carry.length ? Int16Array.from([...this.carry, ...samples]) : samples;
    this.carry.length = 0;
    const whole = Math.floor(all.length / this.factor);
    const out = new Int16Array(whole);
    for (let i = 0; i < whole; i++) {
      let sum = 0;
      for (let j = 0; j < this.factor; j++) sum += all[i * this.factor + j]!;
      out[i] = Math.round(sum / this.factor);
    }
    for (let i = whole * this.factor; i < all.length; i++) this.carry.push(all[i]!);
    return out;
  }
}
