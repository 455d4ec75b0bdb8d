import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { speakText } from '../simulated-speech';
import { listenOnLoopback, readBody, withLiveSettings, type RunningSimulator, type SimulatorMode, type SimulatorOptions } from '../simulated-service';
import type { Voice } from '../../contracts/voices';

/**
 * Which speech server the simulator plays (a live setting):
 * - `voice-listing`: a server that lists its voices at `GET /v1/audio/voices` and takes
 *   Kokoro-FastAPI's `lang_code` (the default);
 * - `openai`: OpenAI's API: no voice list (404), OpenAI's fixed voices, and a 400 for any body
 *   field OpenAI does not document, as OpenAI answers unknown parameters.
 */
export type SpeechServerKind = 'voice-listing' | 'openai';

/** OpenAI's `pcm` format: 24 kHz, 16-bit signed little-endian, mono (https://platform.openai.com/docs/guides/text-to-speech). */
const SAMPLE_RATE = 24_000;

/** OpenAI's built-in voices as its text-to-speech guide lists them (https://platform.openai.com/docs/guides/text-to-speech#voice-options). */
export const OPENAI_SIMULATED_VOICES: Voice[] = [
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'nova',
  'onyx',
  'sage',
  'shimmer',
  'verse',
  'marin',
  'cedar',
].map((id) => ({ id, name: id, language: null, gender: null }));

/** The body fields of OpenAI's `POST /v1/audio/speech` (https://platform.openai.com/docs/api-reference/audio/createSpeech). */
const OPENAI_SPEECH_FIELDS = ['model', 'input', 'voice', 'instructions', 'response_format', 'speed', 'stream_format'];

export interface SpeechSimulatorOptions extends SimulatorOptions {
  /** The key clients must send as `Authorization: Bearer`. */
  apiKey?: string;
  voices?: Voice[];
  /** Milliseconds between the pieces of audio after the first (default 10, ten times faster than real time). */
  pieceIntervalMs?: number;
  /** Default `voice-listing`; `openai` uses OpenAI's voices unless `voices` is given. */
  kind?: SpeechServerKind;
}

/** A speech request as the simulator received it (`speed` 1 when the request had none, `lang_code` null). */
export interface SimulatedSpeechRequest {
  model: string;
  input: string;
  voice: string;
  speed: number;
  lang_code: string | null;
}

/** How the answer to a speech request went. */
export interface SimulatedSpeechStream {
  /** Bytes of audio the whole answer holds. */
  totalBytes: number;
  /** Bytes written to the client so far. */
  sentBytes: number;
  /** `streaming` until the last piece is written (`finished`) or the client hangs up first (`client closed`). */
  outcome: 'streaming' | 'finished' | 'client closed';
}

export interface SpeechSimulator extends RunningSimulator {
  /** The key clients must send; set it to another value to revoke the one clients have. */
  apiKey: string;
  readonly voices: readonly Voice[];
  /** Which server it plays; may be changed at any time. */
  kind: SpeechServerKind;
  /** Every speech request answered with audio, oldest first. */
  readonly speechRequests: SimulatedSpeechRequest[];
  /** The fields of each of `speechRequests`' bodies, in the same order. */
  readonly speechFields: string[][];
  /** The answer to each of `speechRequests`, in the same order. */
  readonly speechStreams: SimulatedSpeechStream[];
}

export const SIMULATOR_API_KEY = 'simulator-api-key';

/** Voices of the local simulator: Indian Hindi and English voices, both genders. */
export const DEFAULT_SIMULATED_VOICES: Voice[] = [
  { id: 'anika', name: 'Anika', language: 'hi', gender: 'female' },
  { id: 'kabir', name: 'Kabir', language: 'hi', gender: 'male' },
  { id: 'meera', name: 'Meera', language: 'en-IN', gender: 'female' },
  { id: 'arjun', name: 'Arjun', language: 'en-IN', gender: 'male' },
  { id: 'tara', name: 'Tara', language: 'ta', gender: 'female' },
  { id: 'dev', name: 'Dev', language: 'mr', gender: 'male' },
];

/** 100 ms of 24 kHz 16-bit audio: the size of each piece of a streamed answer. */
const PIECE_BYTES = (SAMPLE_RATE / 10) * 2;
/** OpenAI's limit on `input`. */
const MAX_INPUT_CHARACTERS = 4096;

type JsonAnswer = { status: number; body: unknown };

/**
 * A stand-in for an OpenAI-compatible speech server on loopback. To a client with the right
 * Bearer key (401 otherwise, in OpenAI's error shape) it answers:
 * - `GET /v1/audio/voices`: `{voices: [{id, name, language, gender}]}` (kind `voice-listing`;
 *   kind `openai` answers 404 as OpenAI does, and refuses body fields OpenAI does not know);
 * - `POST /v1/audio/speech` (`{model, input, voice, speed?, response_format: "pcm", lang_code?}`):
 *   the input as simulated speech (../../audio/simulated-speech.ts), raw 24 kHz 16-bit PCM
 *   as `audio/pcm`, streamed in pieces of 100 ms: the first after `latencyMs` (the time to
 *   first byte), the rest every `pieceIntervalMs`, faster than real time as real servers
 *   are. A client that hangs up stops the stream. A body it cannot speak is a 400 naming
 *   the field (`param`) as OpenAI does.
 * Like the other simulators it honours `mode` and `latencyMs`, set at any time; so is
 * `apiKey` (a key clients still send after it changed is refused, as a revoked one). It runs its
 * own server rather than `startSimulatedService`, which answers JSON only.
 */
export async function startSpeechSimulator(options: SpeechSimulatorOptions = {}): Promise<SpeechSimulator> {
  const voices = options.voices ?? (options.kind === 'openai' ? OPENAI_SIMULATED_VOICES : DEFAULT_SIMULATED_VOICES);
  const pieceIntervalMs = options.pieceIntervalMs ?? 10;
  const state = {
    latencyMs: options.latencyMs ?? 0,
    mode: 'normal' as SimulatorMode,
    apiKey: options.apiKey ?? SIMULATOR_API_KEY,
    kind: options.kind ?? ('voice-listing' as SpeechServerKind),
  };
  const speechRequests: SimulatedSpeechRequest[] = [];
  const speechStreams: SimulatedSpeechStream[] = [];
  const speechFields: string[][] = [];
  const spoken = new SpokenTextCache();

  const answer = (req: IncomingMessage, body: string): JsonAnswer | { speak: SimulatedSpeechRequest & { fields: string[] } } => {
    if (state.mode === 'failing') return { status: 500, body: { error: 'simulated provider failure' } };
    if (req.headers.authorization !== `Bearer ${state.apiKey}`) return openAiError(401, 'Incorrect API key provided', 'invalid_api_key');
    const { pathname } = new URL(req.url ?? '/', 'http://simulator');
    if (req.method === 'GET' && pathname === '/v1/audio/voices' && state.kind === 'voice-listing') return { status: 200, body: { voices } };
    if (req.method === 'POST' && pathname === '/v1/audio/speech') {
      const request = readSpeechRequest(body, voices, state.kind);
      return 'refused' in request ? openAiError(400, request.refused, null, request.param) : { speak: request };
    }
    // OpenAI's answer to a path it does not serve.
    return openAiError(404, `Invalid URL (${req.method} ${pathname})`);
  };

  const server = http.createServer((req, res) => {
    if (state.mode === 'hanging') return; // the socket stays open until the client gives up
    void readBody(req).then((body) => {
      const latencyMs = state.latencyMs;
      const result = answer(req, body);
      if (!('speak' in result)) {
        setTimeout(() => sendJson(res, result), latencyMs);
        return;
      }
      const audio = spoken.of(result.speak.input, result.speak.speed);
      const stream: SimulatedSpeechStream = { totalBytes: audio.length, sentBytes: 0, outcome: 'streaming' };
      const { fields, ...speak } = result.speak;
      speechRequests.push(speak);
      speechFields.push(fields);
      speechStreams.push(stream);
      streamAudio(res, audio, stream, latencyMs, pieceIntervalMs);
    });
  });
  const url = await listenOnLoopback(server, options);
  const running = {
    url,
    voices,
    speechRequests,
    speechFields,
    speechStreams,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // streams in progress stop through their `close`
      }),
  };
  return withLiveSettings(running, state, ['latencyMs', 'mode', 'apiKey', 'kind']);
}

/** Whole answers are kept up to this many bytes (about 5 minutes of audio). */
const CACHED_AUDIO_BYTES = 16 * 1024 * 1024;

/**
 * The audio of texts spoken lately. The same text at the same speed is always the same audio,
 * and making it costs the simulator's process milliseconds per sentence, which a benchmark
 * of many calls saying the same lines would pay over and over (and its other simulated
 * services with it). The buffers are only ever read.
 */
class SpokenTextCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  of(text: string, speed: number): Buffer {
    const key = `${speed}:${text}`;
    const cached = this.entries.get(key);
    if (cached) {
      // Most recently used last: the oldest goes first when room is needed.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const audio = littleEndianBytes(speakText(text, { sampleRate: SAMPLE_RATE, speed }));
    if (audio.length > CACHED_AUDIO_BYTES) return audio;
    this.entries.set(key, audio);
    this.bytes += audio.length;
    for (const [oldest, buffer] of this.entries) {
      if (this.bytes <= CACHED_AUDIO_BYTES) break;
      this.entries.delete(oldest);
      this.bytes -= buffer.length;
    }
    return audio;
  }
}

/** What is wrong with a request, and the field it is about (OpenAI's `param`), for a 400. */
interface SpeechRefusal {
  refused: string;
  param: string | null;
}

/** 16-bit samples as the little-endian bytes of OpenAI's `pcm`. */
function littleEndianBytes(samples: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}

/** The request when the simulator can speak it, else what is wrong with it. */
function readSpeechRequest(text: string, voices: readonly Voice[], kind: SpeechServerKind): (SimulatedSpeechRequest & { fields: string[] }) | SpeechRefusal {
  const refuse = (refused: string, param: string | null = null): SpeechRefusal => ({ refused, param });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refuse('the body must be JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return refuse('the body must be a JSON object');
  const fields = Object.keys(body);
  // OpenAI refuses a parameter it does not know, naming it.
  const unknown = kind === 'openai' ? fields.find((field) => !OPENAI_SPEECH_FIELDS.includes(field)) : undefined;
  if (unknown) return refuse(`Unrecognized request argument supplied: ${unknown}`);
  const { model, input, voice, speed = 1, response_format: format, lang_code: langCode = null } = body as Record<string, unknown>;
  if (typeof model !== 'string' || !model) return refuse('`model` is required', 'model');
  if (typeof input !== 'string' || !input.trim()) return refuse('`input` must be a non-empty string', 'input');
  if (input.length > MAX_INPUT_CHARACTERS) return refuse(`\`input\` must be at most ${MAX_INPUT_CHARACTERS} characters`, 'input');
  if (typeof voice !== 'string' || !voices.some((v) => v.id === voice))
    return refuse(`voice '${String(voice)}' is not one of: ${voices.map((v) => v.id).join(', ')}`, 'voice');
  if (typeof speed !== 'number' || !(speed >= 0.25 && speed <= 4)) return refuse('`speed` must be a number from 0.25 to 4', 'speed');
  if (format !== 'pcm') return refuse(`response_format '${String(format)}' is not supported; this server answers 'pcm' only`, 'response_format');
  if (langCode !== null && typeof langCode !== 'string') return refuse('`lang_code` must be a string', 'lang_code');
  return { model, input, voice, speed, lang_code: langCode, fields };
}

/** Writes `audio` in 100 ms pieces: the first after `latencyMs`, then one every `intervalMs`, until done or the client hangs up. */
function streamAudio(res: ServerResponse, audio: Buffer, stream: SimulatedSpeechStream, latencyMs: number, intervalMs: number): void {
  if (res.destroyed) {
    stream.outcome = 'client closed';
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  res.on('close', () => {
    clearTimeout(timer);
    if (stream.outcome === 'streaming') stream.outcome = 'client closed';
  });
  const sendPiece = () => {
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'audio/pcm' });
    const piece = audio.subarray(stream.sentBytes, stream.sentBytes + PIECE_BYTES);
    stream.sentBytes += piece.length;
    if (stream.sentBytes < audio.length) {
      res.write(piece);
      timer = setTimeout(sendPiece, intervalMs);
    } else {
      stream.outcome = 'finished';
      res.end(piece);
    }
  };
  timer = setTimeout(sendPiece, latencyMs);
}

function openAiError(status: number, message: string, code: string | null = null, param: string | null = null): JsonAnswer {
  return { status, body: { error: { message, type: 'invalid_request_error', param, code } } };
}

function sendJson(res: ServerResponse, answer: JsonAnswer): void {
  if (!res.destroyed) res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body));
}
