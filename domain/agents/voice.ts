import type { AgentSettings } from '../../db/models/agent';
import type { Synthesizer } from '../../providers/tts/types';
import { fromProvider } from '../shared/provider-errors';
import type { ValidationIssue } from '../shared/validation-issues';

/** Where the agents' voices come from: the speech-synthesis service's list (`GET /catalog/voices`). */
export type VoiceList = Pick<Synthesizer, 'listVoices'>;

/** Voice ids quoted in a 422 message; the catalog lists them all. */
const QUOTED_VOICES = 12;

/**
 * The contract's "a voice from the voices list": a `voice.voice_id` that is set must be one
 * of the speech-synthesis service's voices, asked on every save (the list is the service's,
 * and can change). One 422 issue when it is not; 502 when the service cannot be asked, so
 * that an agent that could not speak is never saved. An empty `voice_id` asks nothing: the
 * call takes the service's default voice for `voice.language`.
 */
export async function unknownVoiceIssues(voices: VoiceList, settings: AgentSettings): Promise<ValidationIssue[]> {
  const voiceId = settings.voice.voice_id;
  if (!voiceId) return [];
  const offered = await fromProvider(voices.listVoices());
  if (offered.some((v) => v.id === voiceId)) return [];
  const ids = offered.slice(0, QUOTED_VOICES).map((v) => v.id);
  const more = offered.length > QUOTED_VOICES ? ` and ${offered.length - QUOTED_VOICES} more` : '';
  return [
    {
      type: 'value_error',
      loc: ['body', 'voice', 'voice_id'],
      msg: `not a voice of the speech-synthesis service (GET /catalog/voices: ${ids.join(', ')}${more}); leave it empty for the default voice of voice.language`,
      input: voiceId,
    },
  ];
}
