import { expect } from 'chai';
import { decodeMulaw, encodeMulaw } from '../../providers/audio/mulaw';
import { dtmfDurationMs, dtmfFrequencies, dtmfMulaw, dtmfSamples, DIGITS_PATTERN } from '../../media/audio/dtmf';
import { DtmfDetector } from '../../simulators/dtmf-detector';
import { speakText } from '../../simulators/simulated-speech';

/** Every key the detector recognises in `samples`, pushed in chunks of `chunk` samples after `offset` samples of silence. */
function detect(samples: Int16Array, chunk = 160, offset = 0): string {
  const detector = new DtmfDetector();
  const audio = new Int16Array(offset + samples.length + 1600);
  audio.set(samples, offset);
  let digits = '';
  for (let i = 0; i < audio.length; i += chunk) digits += detector.push(audio.subarray(i, i + chunk)).digits;
  return digits;
}

/** Deterministic noise (a linear congruential generator), peak `amplitude`. */
function noise(length: number, amplitude: number, seed = 7): Int16Array {
  const out = new Int16Array(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((state / 0x7fffffff) * 2 - 1) * amplitude);
  }
  return out;
}

describe('keypad digits: DTMF tones and their detector', () => {
  it('plays each key as its row and column frequency, 100 ms of tone and 70 ms of gap; w and W pause 0.5 s and 1 s', () => {
    expect(dtmfFrequencies('1')).to.deep.equal([697, 1209]);
    expect(dtmfFrequencies('0')).to.deep.equal([941, 1336]);
    expect(dtmfFrequencies('#')).to.deep.equal([941, 1477]);
    expect(dtmfFrequencies('*')).to.deep.equal([941, 1209]);
    expect(dtmfFrequencies('x')).to.equal(null);
    expect(dtmfDurationMs('12')).to.equal(340);
    expect(dtmfDurationMs('1w2W')).to.equal(170 + 500 + 170 + 1000);
    const samples = dtmfSamples('5');
    expect(samples.length).to.equal(170 * 8);
    expect(samples.subarray(0, 800).some((s) => Math.abs(s) > 10_000)).to.equal(true);
    expect(samples.subarray(800).every((s) => s === 0)).to.equal(true);
    expect(dtmfMulaw('1w').length).to.equal((170 + 500) * 8);
    expect(() => dtmfSamples('12a')).to.throw(/not keypad digits/);
    expect(DIGITS_PATTERN.test('0123456789*#wW')).to.equal(true);
    expect(DIGITS_PATTERN.test('')).to.equal(false);
    expect(DIGITS_PATTERN.test('1'.repeat(41))).to.equal(false);
  });

  it('recognises every key through mu-law, in any chunking and alignment, repeated keys included', () => {
    const keys = '0123456789*#';
    const audio = decodeMulaw(dtmfMulaw(keys));
    for (const chunk of [1, 160, 333, 8000])
      for (const offset of [0, 37, 81, 159]) expect(detect(audio, chunk, offset), `chunk ${chunk}, offset ${offset}`).to.equal(keys);
    expect(detect(decodeMulaw(dtmfMulaw('1122w#')))).to.equal('1122#');
    const detector = new DtmfDetector();
    const mulaw = dtmfMulaw('7');
    let heard = '';
    for (let i = 0; i < mulaw.length; i += 160) heard += detector.pushMulaw(mulaw.subarray(i, i + 160)).digits;
    expect(heard).to.equal('7');
  });

  it('recognises keys under moderate noise', () => {
    const tones = dtmfSamples('159#');
    const hiss = noise(tones.length, 1500);
    const mixed = tones.map((s, i) => s + hiss[i]!);
    expect(detect(decodeMulaw(encodeMulaw(mixed)))).to.equal('159#');
  });

  it("hears no key in silence, noise, single tones or the simulators' speech", () => {
    expect(detect(new Int16Array(8000))).to.equal('');
    expect(detect(noise(16_000, 12_000))).to.equal('');
    // One sine at a DTMF frequency is no key (a key needs a row and a column).
    const sine = Int16Array.from({ length: 8000 }, (_, i) => Math.round(10_000 * Math.sin((2 * Math.PI * 941 * i) / 8000)));
    expect(detect(sine)).to.equal('');
    const speech = 'Press 1 for sales, press 2 for support. Para español oprima 9. नमस्ते 0123456789 #*';
    for (const speed of [0.5, 1, 1.5]) expect(detect(decodeMulaw(encodeMulaw(speakText(speech, { sampleRate: 8000, speed })))), `speed ${speed}`).to.equal('');
  });

  it('says which pushes are tone, so a listener can keep the tones out of its speech decoder', () => {
    const detector = new DtmfDetector();
    const audio = dtmfSamples('3');
    const tones = [];
    for (let i = 0; i < audio.length; i += 160) tones.push(detector.push(audio.subarray(i, i + 160)).tone);
    expect(tones).to.deep.equal([true, true, true, true, true, false, false, false, false]);
  });
});
