import { expect } from 'chai';
import { decodeMulaw, encodeMulaw, linearToMulaw, mulawSilence, mulawToLinear } from '../../media/audio/mulaw';
import { Downsampler, pcm16ToBytes } from '../../media/audio/pcm';
import { speakText, SpeechDecoder, speechDurationMs } from '../../media/audio/simulated-speech';

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

  it('mu-law round-trips within its quantization step', () => {
    for (const value of [0, 1, -1, 100, -100, 1000, 8000, -8000, 32000, -32768]) {
      const back = mulawToLinear(linearToMulaw(value));
      expect(Math.abs(back - value), `value ${value}`).to.be.at.most(Math.max(8, Math.abs(value) / 16));
    }
    expect(mulawToLinear(0xff)).to.equal(0);
  });
});
