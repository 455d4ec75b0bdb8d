import { expect } from 'chai';
import { decodeMulaw, encodeMulaw, linearToMulaw, mulawSilence, mulawToLinear } from '../../providers/audio/mulaw';
import { Downsampler, pcm16FromBytes, pcm16ToBytes } from '../../providers/audio/pcm';
import { speakText, SpeechDecoder, speechDurationMs } from '../../simulators/simulated-speech';

/** Decodes `samples` pushed in chunks of `chunk` samples. */
function hear(samples: Int16Array, chunk: number, sampleRate = 8000): string {
  const decoder = new SpeechDecoder(sampleRate);
  let text = '';
  for (let i = 0; i < samples.length; i += chunk) text += decoder.push(samples.subarray(i, i + chunk)).text;
  return text;
}

describe('simulated speech (text as tones)', () => {
  const line = 'Hello there, नमस्ते! Book 2 tickets: aaaa llll.';

  it('survives mu-law at 8 kHz at every speed and chunking', () => {
    for (const speed of [0.6, 1, 1.5]) {
      const audio = decodeMulaw(encodeMulaw(speakText(line, { sampleRate: 8000, speed })));
      for (const chunk of [1, 160, 7919]) expect(hear(audio, chunk), `speed ${speed}, chunk ${chunk}`).to.equal(line);
    }
  });

  it('survives 24 kHz synthesis downsampled to 8 kHz telephony audio, split at odd bytes', () => {
    const bytes = pcm16ToBytes(speakText(line, { sampleRate: 24000 }));
    const down = new Downsampler(3);
    const decoder = new SpeechDecoder(8000);
    let text = '';
    for (let i = 0; i < bytes.length; i += 1001) text += decoder.push(decodeMulaw(encodeMulaw(down.pushBytes(bytes.subarray(i, i + 1001))))).text;
    expect(text).to.equal(line);
  });

  it('takes 80 ms a byte at speed 1, and speed scales it', () => {
    expect(speakText('abcd', { sampleRate: 8000 }).length).to.equal(4 * 4 * 160);
    expect(speechDurationMs('abcd')).to.equal(320);
    expect(speechDurationMs('abcd', 2)).to.equal(160);
    expect(speakText('abcd', { sampleRate: 8000, speed: 2 }).length).to.equal(4 * 4 * 80);
  });

  it('reports voicing and trailing silence, and silence decodes to nothing', () => {
    const decoder = new SpeechDecoder(8000);
    const spoken = decoder.push(speakText('hi', { sampleRate: 8000 }));
    expect(spoken).to.include({ text: 'hi', voiced: true });
    // The first push of silence still carries the end of the last tone (the decoder keeps a window's tail).
    decoder.push(decodeMulaw(mulawSilence(400)));
    const quiet = decoder.push(decodeMulaw(mulawSilence(100)));
    expect(quiet.text).to.equal('');
    expect(quiet.voiced).to.equal(false);
    expect(quiet.trailingSilenceMs).to.be.within(480, 500);
  });

  it('sounds exactly as a sine computed per sample would (the generator rotates a vector instead)', () => {
    // The tones as first written: Math.sin of a phase advanced a step per sample, wrapped after each tone.
    const reference = (text: string, sampleRate: number, speed: number): Int16Array => {
      const toneSamples = Math.max(1, Math.round((sampleRate * 20) / 1000 / speed));
      const bytes = Buffer.from(text, 'utf8');
      const out = new Int16Array(bytes.length * 4 * toneSamples);
      let at = 0;
      let phase = 0;
      for (const byte of bytes) {
        for (const index of [byte >> 4, 16, byte & 0x0f, 17]) {
          const step = (2 * Math.PI * (400 + 180 * index)) / sampleRate;
          for (let i = 0; i < toneSamples; i++) {
            out[at++] = Math.round(6000 * Math.sin(phase));
            phase += step;
          }
          phase %= 2 * Math.PI;
        }
      }
      return out;
    };
    for (const [sampleRate, speed] of [
      [8000, 1],
      [24000, 1],
      [24000, 1.5],
      [16000, 0.6],
      [44100, 2],
    ] as const) {
      expect(
        Buffer.from(speakText(line, { sampleRate, speed }).buffer).equals(Buffer.from(reference(line, sampleRate, speed).buffer)),
        `${sampleRate} Hz, speed ${speed}`,
      ).to.equal(true);
    }
  });

  it('hears mu-law pushed as bytes exactly as its decoded samples', () => {
    const mulaw = Buffer.concat([mulawSilence(130), encodeMulaw(speakText(line, { sampleRate: 8000 })), mulawSilence(470)]);
    const bytes = new SpeechDecoder(8000);
    const samples = new SpeechDecoder(8000);
    for (let i = 0; i < mulaw.length; i += 173) {
      const piece = mulaw.subarray(i, i + 173);
      expect(bytes.pushMulaw(piece)).to.deep.equal(samples.push(decodeMulaw(piece)));
    }
  });

  it('encodes every 16-bit sample to the mu-law byte of the segment search', () => {
    const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const encoded = encodeMulaw(all);
    for (let i = 0; i < all.length; i++)
      if (encoded[i] !== linearToMulaw(all[i]!)) expect.fail(`sample ${all[i]}: ${encoded[i]} instead of ${linearToMulaw(all[i]!)}`);
  });

  it('converts PCM bytes little-endian both ways, and downsamples the same whatever the cuts and buffer offsets', () => {
    expect([...pcm16ToBytes(Int16Array.from([1, -2, 0x1234]))]).to.deep.equal([1, 0, 0xfe, 0xff, 0x34, 0x12]);
    expect([...pcm16FromBytes(Buffer.from([1, 0, 0xfe, 0xff, 0x34, 0x12, 9]))]).to.deep.equal([1, -2, 0x1234]);
    const samples = Int16Array.from({ length: 3001 }, (_, i) => Math.round(20000 * Math.sin(i / 7)) + (i % 13));
    // A byte in front, so that the samples sit at odd offsets of the buffer too.
    const bytes = Buffer.concat([Buffer.from([0]), pcm16ToBytes(samples)]).subarray(1);
    const whole = new Downsampler(3).pushBytes(bytes);
    expect(whole).to.have.length(1000);
    expect(whole[10]).to.equal(Math.round((samples[30]! + samples[31]! + samples[32]!) / 3));
    for (const cut of [1, 2, 3, 5, 4800]) {
      const down = new Downsampler(3);
      const parts: number[] = [];
      for (let i = 0; i < bytes.length; i += cut) parts.push(...down.pushBytes(bytes.subarray(i, i + cut)));
      expect(parts, `cuts of ${cut} bytes`).to.deep.equal([...whole]);
    }
  });

  it('mu-law round-trips within its quantization step', () => {
    for (const value of [0, 1, -1, 100, -100, 1000, 8000, -8000, 32000, -32768]) {
      const back = mulawToLinear(linearToMulaw(value));
      expect(Math.abs(back - value), `value ${value}`).to.be.at.most(Math.max(8, Math.abs(value) / 16));
    }
    expect(mulawToLinear(0xff)).to.equal(0);
  });
});
