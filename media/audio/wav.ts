/**
 * WAV (RIFF/WAVE, uncompressed 16-bit PCM): the 44-byte header the recordings are written
 * with, and a reader for tests and tools.
 */

export const WAV_HEADER_BYTES = 44;

/** The canonical 44-byte header for `dataBytes` bytes of 16-bit PCM. */
export function wavHeader(format: { sampleRate: number; channels: number; dataBytes: number }): Buffer {
  const { sampleRate, channels, dataBytes } = format;
  const blockAlign = channels * 2;
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // size of the fmt chunk
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * blockAlign, 28); // bytes a second
  header.writeUInt16LE(blockAlign, 32);
  header.writeUInt16LE(16, 34); // bits a sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

export interface ParsedWav {
  sampleRate: number;
  channels: number;
  /** The first channel. */
  left: Int16Array;
  /** The second channel; a mono file's only channel again. */
  right: Int16Array;
}

/**
 * Reads a 16-bit PCM WAV with one or two channels, walking its chunks (so `LIST` and other
 * chunks before `data` are skipped). Anything else is an error saying what it is.
 */
export function parseWav(buffer: Buffer): ParsedWav {
  if (buffer.length < 12 || buffer.toString('ascii', 0, 4) !== 'RIFF' || buffer.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let format: { sampleRate: number; channels: number } | null = null;
  for (let at = 12; at + 8 <= buffer.length;) {
    const id = buffer.toString('ascii', at, at + 4);
    const size = buffer.readUInt32LE(at + 4);
    const body = buffer.subarray(at + 8, Math.min(buffer.length, at + 8 + size));
    if (id === 'fmt ') {
      if (body.length < 16) throw new Error('the fmt chunk is too short');
      const [encoding, channels, sampleRate, bits] = [body.readUInt16LE(0), body.readUInt16LE(2), body.readUInt32LE(4), body.readUInt16LE(14)];
      if (encoding !== 1 || bits !== 16) throw new Error(`not 16-bit PCM (format ${encoding}, ${bits} bits)`);
      if (channels !== 1 && channels !== 2) throw new Error(`${channels} channels; only mono and stereo are read`);
      format = { sampleRate, channels };
    } else if (id === 'data') {
      if (!format) throw new Error('the data chunk comes before the fmt chunk');
      const frames = Math.floor(body.length / (format.channels * 2));
      const left = new Int16Array(frames);
      const right = format.channels === 2 ? new Int16Array(frames) : left;
      for (let i = 0; i < frames; i++) {
        left[i] = body.readInt16LE(i * format.channels * 2);
        if (format.channels === 2) right[i] = body.readInt16LE(i * 4 + 2);
      }
      return { ...format, left, right };
    }
    at += 8 + size + (size % 2); // chunks are padded to an even length
  }
  throw new Error('no data chunk');
}
