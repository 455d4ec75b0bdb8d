import { expect } from 'chai';
import type { Voice } from '../../contracts/voices';
import { defaultVoiceFor, isDefaultVoice } from '../../providers/tts/voices';

const voice = (id: string, language: string | null): Voice => ({ id, name: id, language, gender: null });

/** The voice of an agent without `voice.voice_id`, and the voices the catalog marks as defaults. */
describe('the default voice of a language', () => {
  const voices = [voice('anika', 'hi'), voice('kabir', 'hi'), voice('meera', 'en-IN'), voice('alloy', null), voice('echo', null)];

  it('is the first voice of the language, else of its base language, else the first without a language, else the first', () => {
    expect(defaultVoiceFor(voices, 'hi')?.id).to.equal('anika');
    expect(defaultVoiceFor(voices, 'HI')?.id).to.equal('anika');
    expect(defaultVoiceFor(voices, 'en-IN')?.id).to.equal('meera');
    expect(defaultVoiceFor(voices, 'en')?.id).to.equal('meera');
    expect(defaultVoiceFor(voices, 'en-GB')?.id).to.equal('meera');
    expect(defaultVoiceFor(voices, 'ta')?.id).to.equal('alloy');
    expect(defaultVoiceFor([voice('tara', 'ta'), voice('dev', 'mr')], 'hi')?.id).to.equal('tara');
    expect(defaultVoiceFor([], 'hi')).to.equal(null);
  });

  it('is marked once per language in the catalog, and once among the voices without one', () => {
    expect(voices.filter((v) => isDefaultVoice(voices, v)).map((v) => v.id)).to.deep.equal(['anika', 'meera', 'alloy']);
  });
});
