import { WebSocket, type RawData } from 'ws';
import { isRefusal, ProviderUnavailableError, refusalOf } from '../errors';
import type { RecognitionHandlers, RecognitionSettings, RecognitionStream, Transcriber, TurnDetection } from './types';

export interface StreamingTranscriberOptions {
  /** The provider's root, http(s) or ws(s) (http is taken as ws); `/v1/listen` or `/v2/listen` is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Token <key>`. */
  apiKey: string;
  /** How long `open()` waits for the socket to open. */
  connectTimeoutMs: number;
  /** provider_b: a KeepAlive goes out after this long without audio (default 5000; Deepgram hangs up after 10 s). */
  keepAliveMs?: number;
  /** How long `close()` waits for the provider's last word (Metadata or its close) (default 1500). */
  closeWaitMs?: number;
}

/**
 * provider_a's `eot_threshold` (0.5 to 0.9) for our turn detection: how confident the model
 * must be that the caller is done. Lower answers sooner and risks cutting the caller off.
 */
export const EOT_THRESHOLDS: Readonly<Record<TurnDetection, number>> = { responsive: 0.5, balanced: 0.7, patient: 0.85 };

const SERVICE = 'speech recognition';
/** The server setting holding the key (config/env.ts), named when the provider refuses it. */
const CREDENTIALS_SETTING = 'STT_API_KEY';
/** What a refused stream request asks for: the model, the language and the keyterms come from the agent. */
const REFUSED_STREAM = {
  refused: "the agent's speech-recognition settings",
  setting: 'agent settings transcriber.provider, transcriber.language, transcriber.keyterms, transcriber.endpointing_ms',
};
const BYTES_PER_SECOND = 8000;
/**
 * The least `utterance_end_ms`: Deepgram advises 1000 or more, since its interim results come
 * about once a second and a shorter gap cannot be measured
 * (https://developers.deepgram.com/docs/utterance-end).
 */
export const MIN_UTTERANCE_END_MS = 1000;

/**
 * provider_b's `utterance_end_ms`: the gap after the last finalized word that makes Deepgram
 * send `UtteranceEnd`, the end of turn that still comes when background noise keeps
 * `speech_final` from ever being sent. Never shorter than the agent's `endpointing_ms`, so
 * that the backstop does not cut a turn the agent asked to wait for.
 */
export function utteranceEndMs(endpointingMs: number): number {
  return Math.max(MIN_UTTERANCE_END_MS, endpointingMs);
}
/** Flux's documented range of `eager_eot_threshold` (https://developers.deepgram.com/docs/flux/configuration). */
export const EAGER_EOT_THRESHOLD_RANGE = { min: 0.3, max: 0.9 } as const;

/**
 * The `eager_eot_threshold` sent for `requested` with the stream's `eot_threshold`: an early
 * end of turn is a guess at the end of turn, so it may not need more confidence than the end
 * itself (the threshold must be at most `eot_threshold`): a higher one is lowered to it
 * (decision 0226). Outside Flux's range it is a programming error, not a setting to guess at.
 */
export function eagerEotThreshold(requested: number, eotThreshold: number): number {
  if (!(requested >= EAGER_EOT_THRESHOLD_RANGE.min && requested <= EAGER_EOT_THRESHOLD_RANGE.max))
    throw new RangeError(`eagerEndOfTurnThreshold must be between ${EAGER_EOT_THRESHOLD_RANGE.min} and ${EAGER_EOT_THRESHOLD_RANGE.max}, not ${requested}`);
  return Math.min(requested, eotThreshold);
}
const DEFAULT_KEEP_ALIVE_MS = 5_000;
const DEFAULT_CLOSE_WAIT_MS = 1_500;

/** The WebSocket URL that opens a stream with `settings`: mu-law at 8 kHz, one channel. */
export function listenUrl(baseUrl: string, settings: RecognitionSettings): string {
  const root = baseUrl.replace(/^http(s?):\/\//i, 'ws$1://').replace(/\/+$/, '');
  const query = new URLSearchParams({ model: settings.model, encoding: 'mulaw', sample_rate: String(BYTES_PER_SECOND) });
  if (settings.provider === 'provider_a') {
    const eotThreshold = EOT_THRESHOLDS[settings.turnDetection];
    query.set('eot_threshold', String(eotThreshold));
    if (settings.eagerEndOfTurnThreshold !== undefined)
      query.set('eager_eot_threshold', String(eagerEotThreshold(settings.eagerEndOfTurnThreshold, eotThreshold)));
  } else {
    query.set('channels', '1');
    query.set('language', settings.language);
    query.set('endpointing', String(settings.endpointingMs));
    // UtteranceEnd needs interim results; punctuation and smart formatting make the turn readable text for the model.
    query.set('interim_results', 'true');
    query.set('utterance_end_ms', String(utteranceEndMs(settings.endpointingMs)));
    query.set('punctuate', 'true');
    query.set('smart_format', 'true');
  }
  for (const term of settings.keyterms) query.append('keyterm', term);
  return `${root}/${settings.provider === 'provider_a' ? 'v2' : 'v1'}/listen?${query}`;
}

/**
 * Deepgram's two streaming recognizers behind one Transcriber: provider_a speaks Flux's
 * `/v2/listen` (`flux-general-multi`: the model detects the end of turn and the language),
 * provider_b the `/v1/listen` protocol (`nova-3`: the turn ends after `endpointing` ms of
 * silence, or at `UtteranceEnd` when noise hides the silence). Decision 0180.
 */
export class StreamingTranscriber implements Transcriber {
  constructor(private readonly options: StreamingTranscriberOptions) {}

  async open(settings: RecognitionSettings, handlers: RecognitionHandlers): Promise<RecognitionStream> {
    const { socket, early } = await connect(listenUrl(this.options.baseUrl, settings), this.options.apiKey, this.options.connectTimeoutMs);
    const reader = settings.provider === 'provider_a' ? new TurnInfoReader(handlers) : new ResultsReader(handlers);
    return new ListenStream(socket, early, reader, handlers, {
      keepAliveMs: settings.provider === 'provider_b' ? (this.options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS) : null,
      closeWaitMs: this.options.closeWaitMs ?? DEFAULT_CLOSE_WAIT_MS,
    });
  }
}

/** An open socket, and what it said before anyone listened (see connect). */
interface OpenedSocket {
  socket: WebSocket;
  early: EarlyMessages;
}

/** Messages that arrived before the stream took the socket over; it reads them first. */
interface EarlyMessages {
  messages: [RawData, boolean][];
  stop(): void;
}

/**
 * Opens the socket, or rejects with ProviderUnavailableError (connection refused, a 5xx, no
 * answer in time) or ProviderRefusedError (a 4xx: the key or the stream's settings). Messages
 * are kept from the start: a provider that speaks at once (Flux's `Connected`) may send them
 * in the same packet as the handshake, and they are emitted before the opener resumes.
 */
function connect(url: string, apiKey: string, timeoutMs: number): Promise<OpenedSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: { Authorization: `Token ${apiKey}` } });
    const messages: [RawData, boolean][] = [];
    const keep = (data: RawData, isBinary: boolean) => messages.push([data, isBinary]);
    socket.on('message', keep);
    let settled = false;
    const fail = (reason: string, status?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.terminate();
      reject(
        status !== undefined && isRefusal(status)
          ? refusalOf(SERVICE, status, reason, CREDENTIALS_SETTING, REFUSED_STREAM)
          : new ProviderUnavailableError(SERVICE, reason),
      );
    };
    const timer = setTimeout(() => fail(`no connection within ${timeoutMs} ms`), timeoutMs);
    // Errors after the outcome (the aborted handshake's own) have nobody left to tell.
    socket.on('error', (error) => fail(error.message));
    socket.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', () => undefined);
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8').slice(0, 300);
        fail(`answered ${response.statusCode}${body ? `: ${body}` : ''}`, response.statusCode);
      });
    });
    socket.once('open', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ socket, early: { messages, stop: () => socket.off('message', keep) } });
    });
  });
}

/** Turns one protocol's server messages into the handlers' calls. */
interface ServerMessageReader {
  read(message: ServerMessage): void;
}

/** The fields of the providers' JSON messages this adapter reads. */
interface ServerMessage {
  type?: unknown;
  // v1 Results
  is_final?: unknown;
  speech_final?: unknown;
  channel?: { alternatives?: { transcript?: unknown }[] };
  // v1 Results' window (with `duration`), and Metadata's whole audio
  start?: unknown;
  duration?: unknown;
  // v1 UtteranceEnd
  last_word_end?: unknown;
  // v2 TurnInfo
  event?: unknown;
  turn_index?: unknown;
  audio_window_end?: unknown;
  transcript?: unknown;
  languages?: unknown;
  // Error (both)
  description?: unknown;
  message?: unknown;
}

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const normalize = (text: unknown): string => (typeof text === 'string' ? text.replace(/\s+/g, ' ').trim() : '');
const joinPieces = (pieces: string[]): string => pieces.filter(Boolean).join(' ');

/**
 * `/v1/listen` Results: interims carry the words since the last `is_final` piece; the turn is
 * the `is_final` pieces joined. It ends at whichever comes first of a Results with
 * `speech_final` (endpointing heard silence) and an `UtteranceEnd` (no word for
 * `utterance_end_ms`; Deepgram's answer to noise that hides the silence), and only once: the
 * other one then finds no pieces left and ends nothing
 * (https://developers.deepgram.com/docs/understanding-end-of-speech-detection).
 */
class ResultsReader implements ServerMessageReader {
  private pieces: string[] = [];
  private turnsEnded = 0;

  constructor(private readonly handlers: RecognitionHandlers) {}

  read(message: ServerMessage): void {
    if (message.type === 'UtteranceEnd') return this.endTurn(numberOrNull(message.last_word_end));
    if (message.type !== 'Results') return;
    const transcript = normalize(message.channel?.alternatives?.[0]?.transcript);
    if (message.is_final !== true) {
      const soFar = joinPieces([...this.pieces, transcript]);
      if (soFar) this.handlers.onInterim(soFar);
      return;
    }
    if (transcript) this.pieces.push(transcript);
    if (message.speech_final === true) {
      const start = numberOrNull(message.start);
      const duration = numberOrNull(message.duration);
      return this.endTurn(start !== null && duration !== null ? start + duration : null);
    }
    const turn = joinPieces(this.pieces);
    if (turn) this.handlers.onInterim(turn);
  }

  private endTurn(audioEndSeconds: number | null): void {
    const turn = joinPieces(this.pieces);
    this.pieces = [];
    if (turn) this.handlers.onTurnEnd({ text: turn, language: null, turnIndex: this.turnsEnded++, audioEndSeconds });
  }
}

/**
 * Flux's `/v2/listen` TurnInfo: every event but EndOfTurn (StartOfTurn, Update,
 * EagerEndOfTurn, TurnResumed) carries the turn so far; EndOfTurn ends it once. `languages`
 * (most frequent first) comes only from `flux-general-multi` and only once it detected one,
 * so the turn's language is the latest list seen in the turn, null when none came.
 *
 * With `eager_eot_threshold`, an EagerEndOfTurn (never empty) is followed for its turn by a
 * TurnResumed (the caller went on) or by the EndOfTurn, whose transcript Flux documents to be
 * the eager one's (https://developers.deepgram.com/docs/flux/state). Deepgram's docs also said
 * once that it differs about 1% of the time: an EndOfTurn whose text is not the pending early
 * end's is told as a resumption first, so a reply prepared on an early end is never delivered
 * for words the caller did not say (decision 0226).
 */
export class TurnInfoReader implements ServerMessageReader {
  private lastEndedTurn = -1;
  private turnsEnded = 0;
  private language: string | null = null;
  /** The early end told and not yet resumed or confirmed. */
  private eager: { turnIndex: number; text: string } | null = null;

  constructor(private readonly handlers: RecognitionHandlers) {}

  read(message: ServerMessage): void {
    if (message.type !== 'TurnInfo') return;
    const transcript = normalize(message.transcript);
    const detected = Array.isArray(message.languages) ? message.languages.find((l): l is string => typeof l === 'string' && l !== '') : undefined;
    if (detected) this.language = detected;
    const turnIndex = typeof message.turn_index === 'number' ? message.turn_index : this.turnsEnded;
    // A turn ends once: a repeated EndOfTurn (or a late early end of it) tells nothing more.
    const ended = turnIndex <= this.lastEndedTurn;
    if (message.event === 'EndOfTurn') return ended ? undefined : this.endTurn(turnIndex, transcript, numberOrNull(message.audio_window_end));
    if (message.event === 'TurnResumed') this.resume();
    if (transcript) this.handlers.onInterim(transcript);
    if (message.event === 'EagerEndOfTurn' && transcript && !ended) {
      // The same early end again is no news; one with other words without a resumption between replaces the first: void it.
      if (this.eager?.turnIndex === turnIndex && this.eager.text === transcript) return;
      if (this.eager) this.resume();
      this.eager = { turnIndex, text: transcript };
      this.handlers.onEagerTurnEnd?.({ text: transcript, language: this.language, turnIndex });
    }
  }

  private endTurn(turnIndex: number, transcript: string, audioEndSeconds: number | null): void {
    if (this.eager && (this.eager.turnIndex !== turnIndex || this.eager.text !== transcript)) this.resume();
    this.eager = null;
    const language = this.language;
    this.language = null;
    this.lastEndedTurn = turnIndex;
    this.turnsEnded++;
    if (transcript) this.handlers.onTurnEnd({ text: transcript, language, turnIndex, audioEndSeconds });
  }

  /** Voids the pending early end, if any. */
  private resume(): void {
    if (!this.eager) return;
    const { turnIndex } = this.eager;
    this.eager = null;
    this.handlers.onTurnResumed?.({ turnIndex });
  }
}

class ListenStream implements RecognitionStream {
  private bytesSent = 0;
  private lastSentAt = Date.now();
  private closing: Promise<{ audioSeconds: number }> | null = null;
  private failed = false;
  private metadataSeconds: number | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  /** Resolves when the provider said its last word (Metadata) or the socket closed. */
  private readonly finished: Promise<void>;

  constructor(
    private readonly socket: WebSocket,
    early: EarlyMessages,
    private readonly reader: ServerMessageReader,
    private readonly handlers: RecognitionHandlers,
    private readonly options: { keepAliveMs: number | null; closeWaitMs: number },
  ) {
    let markFinished!: () => void;
    this.finished = new Promise((resolve) => (markFinished = resolve));
    const onMessage = (data: RawData, isBinary: boolean) => {
      const message = isBinary ? null : parse(data);
      if (!message) return;
      if (message.type === 'Metadata' && typeof message.duration === 'number') {
        this.metadataSeconds = message.duration;
        markFinished();
      } else if (message.type === 'Error') {
        this.fail(`reported an error: ${normalize(message.description) || normalize(message.message) || 'no description'}`);
      } else if (!this.closing) {
        // A turn still in progress when we close is not the caller's: nothing is reported after close().
        this.reader.read(message);
      }
    };
    early.stop();
    for (const [data, isBinary] of early.messages) onMessage(data, isBinary);
    socket.on('message', onMessage);
    socket.on('error', (error) => this.fail(error.message));
    socket.on('close', (code, reason) => {
      markFinished();
      this.fail(`closed the stream (${code}${reason.length ? ` ${reason.toString('utf8')}` : ''})`);
    });
    if (options.keepAliveMs !== null) this.startKeepAlive(options.keepAliveMs);
  }

  sendAudio(mulaw: Buffer): void {
    if (this.closing || this.socket.readyState !== WebSocket.OPEN || mulaw.length === 0) return;
    this.socket.send(mulaw);
    this.bytesSent += mulaw.length;
    this.lastSentAt = Date.now();
  }

  close(): Promise<{ audioSeconds: number }> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private async finish(): Promise<{ audioSeconds: number }> {
    this.stopKeepAlive();
    if (this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ type: 'CloseStream' }));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.closeWaitMs)))]);
      clearTimeout(timer);
    }
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
    else if (this.socket.readyState !== WebSocket.CLOSED) this.socket.terminate();
    return { audioSeconds: this.metadataSeconds ?? this.bytesSent / BYTES_PER_SECOND };
  }

  private sendText(message: Record<string, unknown>): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify(message));
    this.lastSentAt = Date.now();
  }

  /** The stream broke before we closed it: tell the handlers once. */
  private fail(reason: string): void {
    if (this.closing || this.failed) return;
    this.failed = true;
    this.stopKeepAlive();
    this.handlers.onError(new ProviderUnavailableError(SERVICE, reason));
    if (this.socket.readyState === WebSocket.OPEN) this.socket.terminate();
  }

  /** Deepgram hangs up on a stream without audio for 10 s, and a caller on hold sends none. */
  private startKeepAlive(keepAliveMs: number): void {
    this.keepAlive = setInterval(
      () => {
        if (Date.now() - this.lastSentAt >= keepAliveMs) this.sendText({ type: 'KeepAlive' });
      },
      Math.max(10, keepAliveMs / 2),
    );
    this.keepAlive.unref();
  }

  private stopKeepAlive(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
  }
}

function parse(data: RawData): ServerMessage | null {
  try {
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ServerMessage) : null;
  } catch {
    return null;
  }
}
