import { ProviderRefusedError } from '../errors';
import type { SpeechRequest, Synthesizer } from './types';
import { defaultVoiceFor } from './voices';

/**
 * The synthesizer of a call whose agent has no `voice.voice_id`: every sentence is spoken
 * with the speech server's default voice for `language` (see defaultVoiceFor). The voice
 * list is asked for at once, so that it arrives while the call connects, and once per call;
 * a failed request is made again for the next sentence. Its failure is the synthesis's
 * failure (the conversation's `error` event says what is wrong).
 */
export function withDefaultVoice(synthesizer: Synthesizer, language: string): Synthesizer {
  let chosen: Promise<string> | null = null;
  const defaultVoice = (): Promise<string> => {
    if (!chosen) {
      const asked = synthesizer.listVoices().then((voices) => {
        const voice = defaultVoiceFor(voices, language);
        if (!voice) throw new ProviderRefusedError('speech synthesis', 'a default voice', 'server setting TTS_BASE_URL', 'it lists no voices');
        return voice.id;
      });
      chosen = asked;
      asked.catch(() => {
        if (chosen === asked) chosen = null;
      });
    }
    return chosen;
  };
  void defaultVoice().catch(() => undefined);
  return {
    listVoices: () => synthesizer.listVoices(),
    async *synthesize(request: SpeechRequest) {
      const voice = request.voice || (await defaultVoice());
      yield* synthesizer.synthesize({ ...request, voice });
    },
  };
}
