import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isRefusal, ProviderUnavailableError, refusalOf } from '../errors';
import type { SpeechCreateParams } from 'openai/resources/audio/speech';
import { getJson } from '../http-json';
import { OPENAI_VOICES } from './openai-voices';
import type { SpeechRequest, Synthesizer, Voice } from './types';

/**
 * What kind of speech server `TTS_BASE_URL` is (decision 0181):
 * - `openai`: OpenAI's API, or a server that like it lists no voices: the fixed OpenAI voices,
 *   and a body with only the fields of OpenAI's `SpeechCreateParams`;
 * - `kokoro`: Kokoro-FastAPI: voices at `GET /v1/audio/voices` as `{voices: [...]}`, and its
 *   `lang_code` in the body;
 * - `speaches`: Speaches: voices at `GET /v1/audio/speech/voices` as an array of
 *   `{voice_id, ...}`, and OpenAI's body;
 * - `auto`: `openai` for api.openai.com; else the first voice list that answers (Kokoro's
 *   path, then Speaches'), `openai` when both answer 404.
 */
export type SpeechServerFlavour = 'auto' | 'openai' | 'kokoro' | 'speaches';
export const SPEECH_SERVER_FLAVOURS: readonly SpeechServerFlavour[] = ['auto', 'openai', 'kokoro', 'speaches'];

export interface OpenAiCompatibleSpeechOptions {
  /** The server's root; `/v1/audio/speech` (and the flavour's voice list path) is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; empty for servers without keys. */
  apiKey: string;
  /** For the voice list the whole exchange; for speech each wait for audio (the first byte, then every next piece). */
  timeoutMs: number;
  /** Default `auto`. */
  flavour?: SpeechServerFlavour;
}

/** The JSON body of `POST /v1/audio/speech`: OpenAI's fields, plus Kokoro-FastAPI's `lang_code` for that flavour only. */
type SpeechBody = SpeechCreateParams & { lang_code?: string };

/** A known flavour: where its voices are, and what its speech body holds. */
interface Flavour {
  name: Exclude<SpeechServerFlavour, 'auto'>;
  listVoices(): Promise<Voice[]>;
  body(request: SpeechRequest): SpeechBody;
}

/** A voice entry: bare names (Kokoro-FastAPI before 0.3), or objects with `id` (Kokoro-FastAPI) or `voice_id` (Speaches). */
type VoiceEntry = string | { id?: unknown; voice_id?: unknown; name?: unknown; language?: unknown; gender?: unknown };

const SERVICE = 'speech synthesis';
/** The server settings of this adapter (config/env.ts), named when the server refuses them. */
const CREDENTIALS_SETTING = 'TTS_API_KEY';
const ADDRESS_SETTING = 'TTS_BASE_URL';

/** Where a server at this address that is OpenAI's own is told apart without asking it. */
const OPENAI_HOST = 'api.openai.com';

/** The agent setting behind each field of a speech request, for a refusal that names the field (OpenAI's `param`). */
const AGENT_SETTING_OF_PARAM: Record<string, { what: string; setting: string; value: (r: SpeechRequest) => string | number }> = {
  voice: { what: 'voice', setting: 'voice.voice_id', value: (r) => r.voice },
  model: { what: 'model', setting: 'voice.model', value: (r) => r.model },
  speed: { what: 'speed', setting: 'voice.speed', value: (r) => r.speed },
  lang_code: { what: 'language', setting: 'voice.language', value: (r) => r.language },
};

/**
 * An OpenAI-compatible speech server (the protocol of `POST /v1/audio/speech`), of one of the
 * flavours above. The flavour is settled once (for `auto`, on first use; a failed probe is
 * made again next time), and the requests never carry a field that flavour does not document.
 */
export class OpenAiCompatibleSpeech implements Synthesizer {
  private flavour: Promise<Flavour> | null = null;

  constructor(private readonly options: OpenAiCompatibleSpeechOptions) {}

  /** The flavour in use (`auto` resolved). */
  async serverFlavour(): Promise<Exclude<SpeechServerFlavour, 'auto'>> {
    return (await this.resolvedFlavour()).name;
  }

  async listVoices(): Promise<Voice[]> {
    return (await this.resolvedFlavour()).listVoices();
  }

  private resolvedFlavour(): Promise<Flavour> {
    if (!this.flavour) {
      const settling = this.settleFlavour();
      this.flavour = settling;
      settling.catch(() => {
        if (this.flavour === settling) this.flavour = null;
      });
    }
    return this.flavour;
  }

  private async settleFlavour(): Promise<Flavour> {
    const wanted = this.options.flavour ?? 'auto';
    if (wanted === 'openai') return this.openAi();
    if (wanted === 'kokoro') return this.kokoro();
    if (wanted === 'speaches') return this.speaches();
    if (new URL(this.options.baseUrl).hostname.toLowerCase() === OPENAI_HOST) return this.openAi();
    // A server's voice list is the way to tell it: the first path that answers names the flavour.
    if (await this.listsVoicesAt(KOKORO_VOICES_PATH)) return this.kokoro();
    if (await this.listsVoicesAt(SPEACHES_VOICES_PATH)) return this.speaches();
    return this.openAi();
  }

  /**
   * Whether the server answers a voice list at `path`: 2xx yes, 404 no; anything else (a
   * refused key, a server error, no answer) throws, so that no flavour is settled on it.
   */
  private async listsVoicesAt(path: string): Promise<boolean> {
    const answer = await this.voiceListAnswer(path);
    if (answer.status === 404) return false;
    if (answer.status < 200 || answer.status > 299) throw voiceListFailure(answer);
    return true;
  }

  private openAi(): Flavour {
    return { name: 'openai', listVoices: () => Promise.resolve(OPENAI_VOICES.map((v) => ({ ...v }))), body: openAiBody };
  }

  private kokoro(): Flavour {
    return {
      name: 'kokoro',
      listVoices: async () => {
        const body = (await this.voiceList(KOKORO_VOICES_PATH)) as { voices?: unknown };
        if (!Array.isArray(body.voices)) throw new ProviderUnavailableError(SERVICE, 'answered a voice list without `voices`');
        return (body.voices as VoiceEntry[]).map(toVoice).filter((v): v is Voice => v !== null);
      },
      // `lang_code` is Kokoro-FastAPI's field for the language of the text.
      body: (request) => ({ ...openAiBody(request), lang_code: request.language }),
    };
  }

  private speaches(): Flavour {
    return {
      name: 'speaches',
      listVoices: async () => {
        const body = await this.voiceList(SPEACHES_VOICES_PATH);
        if (!Array.isArray(body)) throw new ProviderUnavailableError(SERVICE, 'answered a voice list that is not an array');
        return (body as VoiceEntry[]).map(toVoice).filter((v): v is Voice => v !== null);
      },
      body: openAiBody,
    };
  }

  private async voiceList(path: string): Promise<unknown> {
    const answer = await this.voiceListAnswer(path);
    if (answer.status < 200 || answer.status > 299) throw voiceListFailure(answer);
    return answer.body;
  }

  private voiceListAnswer(path: string): Promise<{ status: number; body: unknown }> {
    const { baseUrl, apiKey, timeoutMs } = this.options;
    return getJson({ service: SERVICE, url: `${baseUrl}${path}`, headers: bearer(apiKey), timeoutMs });
  }

  /**
   * `POST /v1/audio/speech` with `response_format: "pcm"` (24 kHz 16-bit mono), read as a
   * stream so that the first audio plays while the rest is still being made; the body is the
   * flavour's (OpenAI's fields, and `lang_code` for Kokoro-FastAPI only). A stopped iteration
   * (abort, `break`, an error) closes the connection, which tells the server to stop.
   *
   * Over node:http rather than fetch: a reply streams as hundreds of pieces, and fetch's web
   * streams cost about twice the CPU per piece, which every live call on the node pays.
   * Redirects are not followed (a 3xx is an answer like any other non-2xx).
   */
  async *synthesize(request: SpeechRequest): AsyncGenerator<Buffer, void, undefined> {
    const { baseUrl, apiKey, timeoutMs } = this.options;
    const { signal } = request;
    signal?.throwIfAborted();
    let flavour: Flavour;
    try {
      flavour = await this.resolvedFlavour();
    } finally {
      signal?.throwIfAborted();
    }
    const body = JSON.stringify(flavour.body(request));
    let exchange: SpeechExchange | null = null;
    const stop = () => exchange?.close(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    // The timeout runs only while this waits for audio: a consumer that takes its time
    // between pieces (playing at real-time pace) is no failure of the server.
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const waitingForAudio = <T>(pending: Promise<T>): Promise<T> => {
      timer = setTimeout(() => {
        timedOut = true;
        exchange?.close();
      }, timeoutMs);
      return pending.finally(() => clearTimeout(timer));
    };
    const failure = (err: unknown, streaming: boolean): unknown => {
      if (signal?.aborted) return signal.reason;
      if (timedOut) return new ProviderUnavailableError(SERVICE, `no audio within ${timeoutMs} ms`);
      return new ProviderUnavailableError(SERVICE, streaming ? 'the audio stream broke off' : describeConnectionFailure(err));
    };
    try {
      let res: IncomingMessage;
      try {
        exchange = postSpeech(`${baseUrl}/v1/audio/speech`, body, apiKey);
        res = await waitingForAudio(exchange.response);
      } catch (err) {
        throw failure(err, false);
      }
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) throw speechFailure(request, status, await waitingForAudio(errorOf(res)));
      const pieces = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      for (;;) {
        let piece: IteratorResult<Buffer>;
        try {
          piece = await waitingForAudio(pieces.next());
        } catch (err) {
          throw failure(err, true);
        }
        if (piece.done) {
          // A connection that closed before the end of a chunked answer ends the body early without an error.
          if (!res.complete) throw failure(null, true);
          return;
        }
        if (piece.value.length) yield piece.value;
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      exchange?.close(); // nothing left to close after a whole answer; otherwise it hangs up
    }
  }
}

const KOKORO_VOICES_PATH = '/v1/audio/voices';
const SPEACHES_VOICES_PATH = '/v1/audio/speech/voices';
const FLAVOUR_SETTING = 'TTS_FLAVOUR';

/** Exactly OpenAI's fields (`SpeechCreateParams`), so that OpenAI, which refuses unknown ones, takes it. */
function openAiBody(request: SpeechRequest): SpeechBody {
  return { model: request.model, input: request.text, voice: request.voice, speed: request.speed, response_format: 'pcm' } satisfies SpeechCreateParams;
}

function voiceListFailure(answer: { status: number; body: unknown }): Error {
  const reason = `answered ${answer.status}${messagePart(providerError(answer.body).message)}`;
  if (isRefusal(answer.status))
    return refusalOf(SERVICE, answer.status, reason, CREDENTIALS_SETTING, {
      refused: 'the voice list request',
      setting: `server settings ${ADDRESS_SETTING}, ${FLAVOUR_SETTING}`,
    });
  return new ProviderUnavailableError(SERVICE, reason);
}

function bearer(apiKey: string): Record<string, string> {
  return apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
}

interface SpeechExchange {
  response: Promise<IncomingMessage>;
  /** Hangs up unless the answer is complete (then its connection is back in the pool). */
  close(reason?: unknown): void;
}

function postSpeech(url: string, body: string, apiKey: string): SpeechExchange {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`unsupported protocol ${target.protocol}`);
  const transport = target.protocol === 'https:' ? https : http;
  let response: IncomingMessage | null = null;
  const req = transport.request(target, {
    method: 'POST',
    // Node's global agents keep connections alive between requests, as fetch's pool did.
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', (res: IncomingMessage) => {
      response = res;
      // Failures reach the reader through its iterator; this keeps a late one from being thrown.
      res.on('error', () => undefined);
      resolve(res);
    });
    // Every error, also after the answer began: only the first one matters (it rejects or is moot).
    req.on('error', reject);
  });
  req.end(body);
  return {
    response: answered,
    close(reason) {
      if (response?.complete) {
        // Drained, so that the connection goes back to the pool even when the reader stopped early.
        if (!response.readableEnded) response.resume();
        return;
      }
      const error = reason instanceof Error ? reason : new Error('the synthesis was stopped');
      // The response stream (if any) fails with the same error, so a pending read ends at once.
      response?.destroy(error);
      req.destroy(error);
    },
  };
}

interface ProviderErrorBody {
  message: string | null;
  /** The request field the error is about, when the server says (OpenAI's `param`). */
  param: string | null;
}

/** The error body of a non-2xx answer, read whole. */
async function errorOf(res: IncomingMessage): Promise<ProviderErrorBody> {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return providerError(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  } catch {
    return { message: null, param: null };
  }
}

/** Message and field of an OpenAI-shaped error body (`{error: {message, param}}`, or `{detail}` as FastAPI servers answer). */
function providerError(body: unknown): ProviderErrorBody {
  const { error, detail } = (body ?? {}) as { error?: { message?: unknown; param?: unknown }; detail?: unknown };
  const message = error?.message ?? detail;
  return { message: typeof message === 'string' && message ? message : null, param: typeof error?.param === 'string' ? error.param : null };
}

function messagePart(message: string | null): string {
  return message ? `: ${message}` : '';
}

/**
 * A speech request the server did not answer with audio. A refusal names the setting to fix:
 * the credentials, the agent's voice setting the server named (`param`), the address on a 404
 * that names nothing (no speech endpoint there), else all of the agent's voice settings.
 */
function speechFailure(request: SpeechRequest, status: number, error: ProviderErrorBody): Error {
  const reason = `answered ${status}${messagePart(error.message)}`;
  if (!isRefusal(status)) return new ProviderUnavailableError(SERVICE, reason);
  const field = error.param ? AGENT_SETTING_OF_PARAM[error.param] : undefined;
  const refusedRequest = field
    ? { refused: `the agent's ${field.what} '${field.value(request)}'`, setting: `agent setting ${field.setting}` }
    : status === 404
      ? { refused: 'the speech request', setting: `server setting ${ADDRESS_SETTING}` }
      : { refused: "the agent's voice settings", setting: 'agent settings voice.voice_id, voice.model, voice.language, voice.speed' };
  return refusalOf(SERVICE, status, reason, CREDENTIALS_SETTING, refusedRequest);
}

function describeConnectionFailure(err: unknown): string {
  const failure = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof failure?.code === 'string' ? failure.code : failure?.cause?.code;
  return typeof code === 'string' ? `connection failed: ${code}` : 'connection failed';
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
