import { expect } from 'chai';
import { encodeMulaw, mulawSilence, mulawToLinear } from '../../providers/audio/mulaw';
import { CallRecording, MAX_RECORDING_MS } from '../../media/audio/recording';
import { SpeechDecoder, speakText, speechDurationMs } from '../../simulators/simulated-speech';
import { parseWav, wavHeader } from '../../media/audio/wav';

const RATE = 8000;
const at = (ms: number) => (ms * RATE) / 1000;

/** `text` as telephony audio: simulated speech in mu-law, cut in 20 ms frames. */
function frames(text: string): Buffer[] {
  const mulaw = encodeMulaw(speakText(text, { sampleRate: RATE }));
  const out: Buffer[] = [];
  for (let i = 0; i < mulaw.length; i += 160) out.push(mulaw.subarray(i, i + 160));
  return out;
}

/** Adds `text` frame by frame from `startMs`, as the engine does while audio arrives or plays. */
function say(add: (mulaw: Buffer, atMs: number) => void, text: string, startMs: number): void {
  frames(text).forEach((frame, i) => add(frame, startMs + i * 20));
}

const heard = (samples: Int16Array) => new SpeechDecoder(RATE).push(samples).text;
const silent = (samples: Int16Array) => samples.every((s) => s === 0);

/** The stereo call recording: caller left, agent right, placed on the call's timeline. */
describe('call recording', () => {
  it('puts the caller on the left and the agent on the right, each where it was said, with silence between', () => {
    const recording = new CallRecording();
    const agentText = 'Namaste, this is Meera.';
    const callerText = 'Hello, who is this?';
    const agentEndMs = 300 + speechDurationMs(agentText);
    const callerStartMs = agentEndMs + 700;
    say((m, t) => recording.addAgent(m, t), agentText, 300);
    say((m, t) => recording.addCaller(m, t), callerText, callerStartMs);
    const callerEndMs = callerStartMs + speechDurationMs(callerText);
    expect(recording.durationMs).to.equal(callerEndMs);

    const wav = parseWav(recording.toWav());
    expect(wav).to.include({ sampleRate: 8000, channels: 2 });
    expect(wav.left.length).to.equal(at(callerEndMs));
    expect(wav.right.length).to.equal(at(callerEndMs));

    expect(heard(wav.left)).to.equal(callerText);
    expect(heard(wav.right)).to.equal(agentText);
    // Each channel holds exactly its own speech at its own offset (the first sample of a tone is sin 0 = 0).
    expect(silent(wav.left.subarray(0, at(callerStartMs) + 1))).to.equal(true);
    expect(wav.left[at(callerStartMs) + 1]).to.not.equal(0);
    expect(silent(wav.right.subarray(0, at(300) + 1))).to.equal(true);
    expect(wav.right[at(300) + 1]).to.not.equal(0);
    expect(wav.right[at(agentEndMs) - 1]).to.not.equal(0);
    expect(silent(wav.right.subarray(at(agentEndMs)))).to.equal(true);
  });

  it('writes a canonical 44-byte RIFF/WAVE PCM header: 2 channels, 8000 Hz, 16-bit', () => {
    const recording = new CallRecording();
    recording.addCaller(mulawSilence(1000), 0);
    const wav = recording.toWav();
    const dataBytes = 8000 * 4;
    expect(wav.length).to.equal(44 + dataBytes);
    expect(wav.toString('ascii', 0, 4)).to.equal('RIFF');
    expect(wav.readUInt32LE(4)).to.equal(36 + dataBytes);
    expect(wav.toString('ascii', 8, 16)).to.equal('WAVEfmt ');
    expect(wav.readUInt32LE(16)).to.equal(16);
    expect(wav.readUInt16LE(20)).to.equal(1); // PCM
    expect(wav.readUInt16LE(22)).to.equal(2);
    expect(wav.readUInt32LE(24)).to.equal(8000);
    expect(wav.readUInt32LE(28)).to.equal(32000);
    expect(wav.readUInt16LE(32)).to.equal(4);
    expect(wav.readUInt16LE(34)).to.equal(16);
    expect(wav.toString('ascii', 36, 40)).to.equal('data');
    expect(wav.readUInt32LE(40)).to.equal(dataBytes);
    expect(wav.subarray(0, 44)).to.deep.equal(wavHeader({ sampleRate: 8000, channels: 2, dataBytes }));

    const empty = new CallRecording();
    expect(empty.durationMs).to.equal(0);
    expect(empty.toWav()).to.deep.equal(wavHeader({ sampleRate: 8000, channels: 2, dataBytes: 0 }));
    expect(parseWav(empty.toWav()).left).to.have.length(0);
  });

  it('places audio written out of order, across the internal blocks, and far into a long call', () => {
    const recording = new CallRecording();
    // Agent speech straddling the 10 s block boundary, written before earlier caller audio.
    say((m, t) => recording.addAgent(m, t), 'across the boundary', 9_500);
    say((m, t) => recording.addCaller(m, t), 'first', 1_000);
    say((m, t) => recording.addCaller(m, t), 'late in the call', 1_200_000);
    const wav = parseWav(recording.toWav());
    expect(wav.left.length).to.equal(at(1_200_000 + speechDurationMs('late in the call')));
    expect(heard(wav.right)).to.equal('across the boundary');
    expect(heard(wav.left.subarray(0, at(2_000)))).to.equal('first');
    expect(heard(wav.left.subarray(at(1_200_000 - 100)))).to.equal('late in the call');
    expect(silent(wav.left.subarray(at(1_000 + speechDurationMs('first')), at(1_200_000)))).to.equal(true);
  });

  it('lets a later write to the same stretch of a channel replace what was there, and drops audio before the call started', () => {
    const recording = new CallRecording();
    say((m, t) => recording.addAgent(m, t), 'wrong words', 500);
    say((m, t) => recording.addAgent(m, t), 'right words', 500);
    expect(heard(parseWav(recording.toWav()).right)).to.equal('right words');

    const early = new CallRecording();
    const mulaw = encodeMulaw(speakText('ab', { sampleRate: RATE }));
    early.addCaller(mulaw, -speechDurationMs('a')); // the first character fell before the start
    const left = parseWav(early.toWav()).left;
    expect(left.length).to.equal(at(speechDurationMs('b')));
    expect(heard(left)).to.equal('b');
  });

  it('holds each mu-law byte as its exact 16-bit sample, interleaved caller then agent, across block edges', () => {
    const recording = new CallRecording();
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    // 9.984 s in: the bytes straddle the edge of the channels' first two internal 10 s blocks.
    const startMs = 9_984;
    recording.addCaller(bytes, startMs);
    recording.addAgent(bytes.subarray(0, 100), startMs + 5);
    const wav = recording.toWav();
    const frame = (sample: number) => 44 + sample * 4;
    for (let i = 0; i < 256; i++) expect(wav.readInt16LE(frame(at(startMs) + i)), `caller byte ${i}`).to.equal(mulawToLinear(i));
    for (let i = 0; i < 100; i++) expect(wav.readInt16LE(frame(at(startMs + 5) + i) + 2), `agent byte ${i}`).to.equal(mulawToLinear(i));
    expect(wav.readInt16LE(frame(at(startMs + 5) + 100) + 2)).to.equal(0);
  });

  it('refuses offsets that are not numbers or end past the longest call', () => {
    const recording = new CallRecording();
    expect(() => recording.addCaller(mulawSilence(20), Number.NaN)).to.throw(RangeError, /finite/);
    expect(() => recording.addAgent(mulawSilence(20), MAX_RECORDING_MS - 10)).to.throw(RangeError, /longest call/);
    expect(recording.durationMs).to.equal(0);
  });

  it('reads mono WAV files and files with chunks before the audio', () => {
    const samples = Int16Array.from([1, -2, 32767, -32768]);
    const data = Buffer.alloc(8);
    samples.forEach((s, i) => data.writeInt16LE(s, i * 2));
    const list = Buffer.concat([Buffer.from('LIST', 'ascii'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc\0', 'ascii')]); // odd size, padded
    const header = wavHeader({ sampleRate: 16000, channels: 1, dataBytes: 8 });
    const withList = Buffer.concat([header.subarray(0, 36), list, header.subarray(36), data]);
    const mono = parseWav(withList);
    expect(mono).to.include({ sampleRate: 16000, channels: 1 });
    expect(Array.from(mono.left)).to.deep.equal([1, -2, 32767, -32768]);
    expect(mono.right).to.equal(mono.left);
    expect(() => parseWav(Buffer.from('not a wav file at all'))).to.throw(/RIFF/);
  });
});
