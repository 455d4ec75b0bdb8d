import { ProviderUnavailableError } from '../errors';
import { getJson, okBody } from '../http-json';
import type { SpeechRequest, Synthesizer, Voice } from './types';

export interface OpenAiCompatibleSpeechOptions {
  /** The server's root; `/v1/audio/voices` and `/v1/audio/speech` are appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; empty for servers without keys. */
  apiKey: string;
  /** For the voice list the whole exchange; for speech each wait for audio (the first byte, then every next piece). */
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

  /**
   * `POST /v1/audio/speech` with `response_format: "pcm"` (24 kHz 16-bit mono), read as a
   * stream so that the first audio plays while the rest is still being made. `lang_code`
   * is Kokoro-FastAPI's language field; servers without it ignore it. A stopped iteration
   * (abort, `break`, an error) closes the connection, which tells the server to stop.
   */
  async *synthesize(request: SpeechRequest): AsyncGenerator<Buffer, void, undefined> {
    const { baseUrl, apiKey, timeoutMs } = this.options;
    const { signal } = request;
    signal?.throwIfAborted();
    const connection = new AbortController();
    const stop = () => connection.abort(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    // The timeout runs only while this waits for audio: a consumer that takes its time
    // between pieces (playing at real-time pace) is no failure of the server.
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const waitingForAudio = <T>(pending: Promise<T>): Promise<T> => {
      timer = setTimeout(() => {
        timedOut = true;
        connection.abort();
      }, timeoutMs);
      return pending.finally(() => clearTimeout(timer));
    };
    const failure = (err: unknown, streaming: boolean): unknown => {
      if (signal?.aborted) return signal.reason;
      if (timedOut) return new ProviderUnavailableError(SERVICE, `no audio within ${timeoutMs} ms`);
      return new ProviderUnavailableError(SERVICE, streaming ? 'the audio stream broke off' : describeConnectionFailure(err));
    };
    try {
      let res: Response;
      try {
        res = await waitingForAudio(
          fetch(`${baseUrl}/v1/audio/speech`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
            body: JSON.stringify({ model: request.model, input: request.text, voice: request.voice, speed: request.speed, response_format: 'pcm', lang_code: request.language }),
            signal: connection.signal,
            redirect: 'error',
          }),
        );
      } catch (err) {
        throw failure(err, false);
      }
      if (!res.ok) throw new ProviderUnavailableError(SERVICE, `answered ${res.status}${await waitingForAudio(errorMessage(res))}`);
      if (!res.body) throw new ProviderUnavailableError(SERVICE, `answered ${res.status} without audio`);
      const reader = res.body.getReader();
      for (;;) {
        let piece: Awaited<ReturnType<typeof reader.read>>;
        try {
          piece = await waitingForAudio(reader.read());
        } catch (err) {
          throw failure(err, true);
        }
        if (piece.done) return;
        if (piece.value.byteLength) yield Buffer.from(piece.value.buffer, piece.value.byteOffset, piece.value.byteLength);
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      connection.abort(); // nothing left to close after a whole answer; otherwise it hangs up
    }
  }
}

/** `: message` from an OpenAI-shaped error body (`{error: {message}}`, or `{detail}` as FastAPI servers answer), else nothing. */
async function errorMessage(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { error?: { message?: unknown }; detail?: unknown };
    const message = body.error?.message ?? body.detail;
    return typeof message === 'string' && message ? `: ${message}` : '';
  } catch {
    return '';
  }
}

function describeConnectionFailure(err: unknown): string {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return code ? `connection failed: ${code}` : 'connection failed';
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
