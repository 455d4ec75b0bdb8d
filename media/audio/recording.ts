import { endianness } from 'node:os';
import { decodeMulawInto } from '../../providers/audio/mulaw';
import { WAV_HEADER_BYTES, wavHeader } from './wav';

/**
 * The stereo recording of a call (`call.record`): the caller on the left channel, the agent
 * on the right, 8 kHz 16-bit, as a WAV file.
 */

export const RECORDING_SAMPLE_RATE = 8000;

/** The longest call there is (the telephony provider's 24-hour limit), so a wild offset cannot claim gigabytes. */
export const MAX_RECORDING_MS = 24 * 60 * 60 * 1000;

const SAMPLES_PER_MS = RECORDING_SAMPLE_RATE / 1000;
/** Channels grow in blocks of 10 s (160 KB): no copying as they grow, and unwritten stretches cost nothing until written. */
const BLOCK_SAMPLES = 10 * RECORDING_SAMPLE_RATE;
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * Audio is placed on the call's timeline by time, not appended: `atMs` counts from the
 * start of the call, the caller's audio where it arrived and the agent's where it was
 * played (the engine adds each frame as it sends it), so silence, pauses and barge-ins come
 * out as they happened and the two channels stay in step. Stretches nobody wrote are silence.
 *
 * Writes to the same channel that overlap (a frame timed a little early) overwrite: the
 * later write wins over the samples it covers; nothing is mixed, so jitter never doubles
 * the volume. Audio before the start of the call (negative `atMs`) is dropped.
 */
export class CallRecording {
  private readonly caller = new Channel();
  private readonly agent = new Channel();

  /** Caller audio (mu-law 8 kHz) that arrived `atMs` after the call started. */
  addCaller(mulaw: Buffer, atMs: number): void {
    this.caller.writeMulaw(mulaw, toSampleIndex(atMs, mulaw.length));
  }

  /** Agent audio (mu-law 8 kHz) that was played `atMs` after the call started. */
  addAgent(mulaw: Buffer, atMs: number): void {
    this.agent.writeMulaw(mulaw, toSampleIndex(atMs, mulaw.length));
  }

  /** Up to the end of the last audio on either channel. */
  get durationMs(): number {
    return Math.max(this.caller.length, this.agent.length) / SAMPLES_PER_MS;
  }

  /** RIFF/WAVE, PCM 16-bit, 2 channels (caller left, agent right), 8000 Hz. */
  toWav(): Buffer {
    const frames = Math.max(this.caller.length, this.agent.length);
    const wav = Buffer.alloc(WAV_HEADER_BYTES + frames * 4);
    wavHeader({ sampleRate: RECORDING_SAMPLE_RATE, channels: 2, dataBytes: frames * 4 }).copy(wav);
    const view = new DataView(wav.buffer, wav.byteOffset + WAV_HEADER_BYTES, frames * 4);
    this.caller.copyInto(view, frames, 0);
    this.agent.copyInto(view, frames, 2);
    return wav;
  }
}

function toSampleIndex(atMs: number, samples: number): number {
  if (!Number.isFinite(atMs)) throw new RangeError(`atMs must be a finite number, not ${atMs}`);
  const at = Math.round(atMs * SAMPLES_PER_MS);
  if (at + samples > MAX_RECORDING_MS * SAMPLES_PER_MS) throw new RangeError(`audio at ${atMs} ms ends past the longest call (${MAX_RECORDING_MS} ms)`);
  return at;
}

/** One channel's samples in fixed blocks, allocated when first written. */
class Channel {
  private readonly blocks: (Int16Array | undefined)[] = [];
  /** One past the last sample written. */
  length = 0;

  /** Mu-law bytes decoded straight into the blocks (every caller frame comes here: no buffer in between). */
  writeMulaw(mulaw: Uint8Array, at: number): void {
    let from = at < 0 ? -at : 0;
    let to = Math.max(at, 0);
    while (from < mulaw.length) {
      const offset = to % BLOCK_SAMPLES;
      const count = Math.min(BLOCK_SAMPLES - offset, mulaw.length - from);
      const block = (this.blocks[Math.floor(to / BLOCK_SAMPLES)] ??= new Int16Array(BLOCK_SAMPLES));
      decodeMulawInto(mulaw.subarray(from, from + count), block, offset);
      from += count;
      to += count;
    }
    this.length = Math.max(this.length, to);
  }

  /** Writes the first `frames` samples into every other 16-bit slot of `view`, starting at `byteOffset` (0 left, 2 right). */
  copyInto(view: DataView, frames: number, byteOffset: number): void {
    const end = Math.min(frames, this.length);
    if (end <= 0) return;
    // Little-endian machines write the samples through an Int16Array over the same bytes (a DataView call per sample made a long call's WAV take milliseconds).
    const aligned = LITTLE_ENDIAN && (view.byteOffset + byteOffset) % 2 === 0;
    const slots = aligned ? new Int16Array(view.buffer, view.byteOffset + byteOffset, frames * 2 - 1) : null;
    for (let start = 0; start < end; start += BLOCK_SAMPLES) {
      const block = this.blocks[start / BLOCK_SAMPLES];
      if (!block) continue; // silence: the WAV is zeroed
      const count = Math.min(BLOCK_SAMPLES, end - start);
      if (slots) for (let i = 0; i < count; i++) slots[(start + i) * 2] = block[i]!;
      else for (let i = 0; i < count; i++) view.setInt16((start + i) * 4 + byteOffset, block[i]!, true);
    }
  }
}
