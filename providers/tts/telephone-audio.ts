import { encodeMulaw } from '../audio/mulaw';
import { Downsampler } from '../audio/pcm';
import { SYNTHESIS_SAMPLE_RATE, type SpeechRequest, type Synthesizer } from './types';

/**
 * Speech as a phone call carries it: the synthesizer's PCM (SYNTHESIS_SAMPLE_RATE) downsampled
 * to 8 kHz and mu-law encoded, piece by piece as it streams; pieces too short to make a sample
 * yet are held back, never yielded empty.
 */
export async function* synthesizeMulaw(synthesizer: Synthesizer, request: SpeechRequest): AsyncIterable<Buffer> {
  const downsampler = new Downsampler(SYNTHESIS_SAMPLE_RATE / 8000);
  for await (const pcm of synthesizer.synthesize(request)) {
    const mulaw = encodeMulaw(downsampler.pushBytes(pcm));
    if (mulaw.length) yield mulaw;
  }
}
