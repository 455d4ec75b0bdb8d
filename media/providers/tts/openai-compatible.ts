import { ProviderUnavailableError } from '../errors';
import { getJson, okBody } from '../http-json';
import type { Synthesizer, Voice } from './types';

export interface OpenAiCompatibleSpeechOptions {
  /** The server's root; `/v1/audio/voices` is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; empty for servers without keys. */
  apiKey: string;
  timeoutMs: number;
}

/** A voice entry: servers answer bare names (Kokoro-FastAPI) or objects with at least an id. */
type VoiceEntry = string | { id?: unknown; voice_id?: unknown; name?: unknown; language?: unknown; gender?: unknown };

const SERVICE = 'speech synthesis';

/**
 * An OpenAI-compatible speech server (the protocol of `POST /v1/audio/speech`). OpenAI's own
 * API has no voice list; the servers that speak its protocol (Kokoro-FastAPI, Speaches and
 * others) list theirs at `GET /v1/audio/voices` as `{voices: [...]}`, each entry a name or an
 * object with `id`/`name`.
 */
export class OpenAiCompatibleSpeech implements Synthesizer {
  constructor(private readonly options: OpenAiCompatibleSpeechOptions) {}

  async listVoices(): Promise<Voice[]> {
    const { baseUrl, apiKey, timeoutMs } = this.options;
    const answer = await getJson({ service: SERVICE, url: `${baseUrl}/v1/audio/voices`, headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {}, timeoutMs });
    const body = okBody(SERVICE, answer) as { voices?: unknown };
    if (!Array.isArray(body.voices)) throw new ProviderUnavailableError(SERVICE, 'answered a voice list without `voices`');
    return (body.voices as VoiceEntry[]).map(toVoice).filter((v): v is Voice => v !== null);
  }
}

function toVoice(entry: VoiceEntry): Voice | null {
  if (typeof entry === 'string') return entry ? { id: entry, name: entry, language: null, gender: null } : null;
  const id = typeof entry.id === 'string' ? entry.id : typeof entry.voice_id === 'string' ? entry.voice_id : '';
  if (!id) return null;
  return {
    id,
    name: typeof entry.name === 'string' && entry.name ? entry.name : id,
    language: typeof entry.language === 'string' ? entry.language : null,
    gender: typeof entry.gender === 'string' ? entry.gender : null,
  };
}
