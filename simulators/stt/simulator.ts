import { randomUUID } from 'node:crypto';
import http, { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { listenOnLoopback, withLiveSettings, type RunningSimulator, type SimulatorMode, type SimulatorOptions } from '../simulated-service';
import { TurnListener, type HeardEvent } from './simulated-turns';

export interface RecognitionSimulatorOptions extends SimulatorOptions {
  /** The key clients must send as `Authorization: Token <key>`. */
  apiKey?: string;
  /**
   * A noisy line (live setting, read when a stream opens): `/v1/listen` endpointing never hears
   * silence, so no `speech_final` comes, as Deepgram warns for background noise; the gap after
   * the last word still brings `UtteranceEnd` when the stream asked for it.
   */
  noisy?: boolean;
  /**
   * Flux's end-of-turn silence for every threshold (live setting, read when a stream opens):
   * a benchmark sets the provider's published end-of-turn latency here; null (the default)
   * derives it from `eot_threshold` (eotSilenceMs).
   */
  fluxEndOfTurnMs?: number | null;
  /**
   * Flux's early-end silence for every `eager_eot_threshold` (live setting, read when a stream
   * opens; only for streams that asked for early ends): a benchmark sets the end of turn less the
   * saving published for eager mode here; null (the default) derives it from the threshold.
   */
  fluxEagerEndOfTurnMs?: number | null;
}

/**
 * The models Deepgram documents for streaming on each path
 * (https://developers.deepgram.com/docs/models-languages-overview): Flux on `/v2/listen`,
 * the Nova family and the older models on `/v1/listen`. A model outside its path's list is
 * refused at the handshake with 400, as Deepgram refuses it.
 */
export const STREAMING_MODELS: Readonly<Record<ListenPath, readonly string[]>> = {
  '/v2/listen': ['flux-general-en', 'flux-general-multi'],
  '/v1/listen': [
    'nova-3',
    'nova-3-general',
    'nova-3-medical',
    'nova-2',
    'nova-2-general',
    'nova-2-meeting',
    'nova-2-finance',
    'nova-2-conversationalai',
    'nova-2-voicemail',
    'nova-2-video',
    'nova-2-medical',
    'nova-2-drivethru',
    'nova-2-automotive',
    'nova',
    'nova-general',
    'nova-phonecall',
    'nova-medical',
    'enhanced',
    'enhanced-general',
    'enhanced-meeting',
    'enhanced-phonecall',
    'enhanced-finance',
    'base',
    'meeting',
    'phonecall',
    'finance',
    'conversationalai',
    'voicemail',
    'video',
  ],
};

export type ListenPath = '/v1/listen' | '/v2/listen';

/** One recognition connection as the simulator saw it. */
export interface SimulatedRecognitionSession {
  /** `/v1/listen` is provider_b's protocol, `/v2/listen` provider_a's. */
  path: ListenPath;
  model: string;
  /** `language` (v1); null when absent. */
  language: string | null;
  /** `endpointing` (v1; 10 when absent, as Deepgram's default); null for `false` or on v2. */
  endpointingMs: number | null;
  /** `eot_threshold` (v2; 0.7 when absent); null on v1. */
  eotThreshold: number | null;
  /** `eager_eot_threshold` (v2): EagerEndOfTurn and TurnResumed come only with it; null when absent and on v1. */
  eagerEotThreshold: number | null;
  /** `utterance_end_ms` (v1); null when absent. */
  utteranceEndMs: number | null;
  /** `interim_results=true` (v1). */
  interimResults: boolean;
  /** `punctuate=true` and `smart_format=true` (v1); the simulator's speech has no punctuation to add. */
  punctuate: boolean;
  smartFormat: boolean;
  /** The query as sent, every parameter with its values. */
  query: Record<string, string[]>;
  /** The stream was opened while the simulator was `noisy`. */
  noisy: boolean;
  /** Every `keyterm` parameter, in order. */
  keyterms: string[];
  /** Audio received so far. */
  audioSeconds: number;
  /** The turns reported (each turn's text once its final result or EndOfTurn went out). */
  turns: string[];
  /** Each EagerEndOfTurn's transcript once it went out (v2 with `eager_eot_threshold`). */
  eagerTurns: string[];
  /** TurnResumed events sent. */
  turnsResumed: number;
  /** `{"type":"KeepAlive"}` messages received. */
  keepAlives: number;
  /** The client sent `{"type":"CloseStream"}`. */
  closeRequested: boolean;
  /** Cuts the connection without a close frame, as a crashed provider or a broken network would. */
  drop(): void;
  /**
   * Fails the stream as the provider reports errors: v1 closes with 1011 and `description` as
   * the reason; v2 (Flux) first sends `{"type":"Error","code","description"}`.
   */
  fail(description: string): void;
}

export interface RecognitionSimulator extends RunningSimulator {
  apiKey: string;
  /** Every connection accepted, oldest first. */
  readonly sessions: SimulatedRecognitionSession[];
  /** See RecognitionSimulatorOptions.fluxEndOfTurnMs. */
  fluxEndOfTurnMs: number | null;
  /** See RecognitionSimulatorOptions.fluxEagerEndOfTurnMs. */
  fluxEagerEndOfTurnMs: number | null;
}

export const RECOGNITION_SIMULATOR_API_KEY = 'simulator-recognition-key';

/**
 * Silence that ends a provider_a turn for its `eot_threshold`, or brings the early end for its
 * `eager_eot_threshold`: a higher threshold wants more certainty that the caller is done,
 * which the simulator models as a longer pause. Linear between the points 0.3 -> 200 ms,
 * 0.5 -> 300 ms, 0.7 -> 600 ms, 0.85 -> 1000 ms, 0.9 -> 1200 ms.
 */
export function eotSilenceMs(threshold: number): number {
  const points: [number, number][] = [
    [0.3, 200],
    [0.5, 300],
    [0.7, 600],
    [0.85, 1000],
    [0.9, 1200],
  ];
  if (threshold <= points[0]![0]) return points[0]![1];
  for (let i = 1; i < points.length; i++) {
    const [x0, y0] = points[i - 1]!;
    const [x1, y1] = points[i]!;
    if (threshold <= x1) return Math.round(y0 + ((threshold - x0) / (x1 - x0)) * (y1 - y0));
  }
  return points[points.length - 1]![1];
}

/** provider_a's language detection as simulated: Hindi when the turn has Devanagari letters, else English. */
export function detectLanguage(text: string): string {
  return /[\u0900-\u097F]/.test(text) ? 'hi' : 'en';
}

/** Deepgram's default `endpointing` when the request has none. */
const DEFAULT_ENDPOINTING_MS = 10;
/** Flux's default `eot_threshold`. */
const DEFAULT_EOT_THRESHOLD = 0.7;
/**
 * Flux's range of `eager_eot_threshold` (https://developers.deepgram.com/docs/flux/configuration);
 * it may not exceed `eot_threshold` (https://developers.telnyx.com/docs/voice/stt/websocket-streaming/parameters/end-of-turn).
 */
const EAGER_EOT_RANGE = [0.3, 0.9] as const;
/** `end_of_turn_confidence` of the events that are no end of turn (StartOfTurn, Update, TurnResumed). */
const SPEAKING_CONFIDENCE = 0.1;
/** A provider_b turn's words are finalized (`is_final`) in pieces of about this much audio, at a word's end. */
const PIECE_SECONDS = 2;

/**
 * A stand-in for Deepgram's two streaming recognizers on loopback, on a real WebSocket server:
 * - `/v1/listen` (provider_b): `Results` with interim results as speech arrives, `is_final`
 *   pieces of a long turn, and a final with `speech_final: true` once `endpointing` ms of
 *   silence followed speech (never on a `noisy` line); with `utterance_end_ms` and
 *   `interim_results=true`, an `UtteranceEnd` once that much audio passed without a new word;
 *   after `CloseStream`, the turn in progress as a final, then `Metadata` with the audio's
 *   duration, and it closes the socket. It does not punctuate (its speech has no punctuation).
 * - `/v2/listen` (provider_a, Flux): `Connected`, then `TurnInfo` events `StartOfTurn`,
 *   `Update` and `EndOfTurn` (after the silence `eotSilenceMs` derives from `eot_threshold`),
 *   with `languages` from `detectLanguage` only for `flux-general-multi`; with
 *   `eager_eot_threshold` (0.3 to 0.9, at most `eot_threshold`), also `EagerEndOfTurn` at the
 *   shorter silence it derives, and `TurnResumed` when the caller speaks before the end; after
 *   `CloseStream`, the turn in progress as an EndOfTurn, and it closes the socket.
 * A model its path does not serve (STREAMING_MODELS) is refused at the handshake with 400.
 * It recognizes the simulators' speech (tones, see simulators/simulated-speech.ts) in the
 * mu-law audio it receives. Silence is measured in audio time, not wall clock: audio may
 * arrive faster than real time and the turns are the same. Progress goes out when characters
 * complete (so barge-in can count words at once) and at most every 100 ms of speech besides.
 * `latencyMs` is added before each turn's final result or EndOfTurn, and before each
 * EagerEndOfTurn (later messages wait behind them). A wrong key is refused with 401, an unknown path with 404, bad parameters with
 * 400; mode `failing` refuses every connection with 500 and `hanging` never answers it.
 */
export async function startRecognitionSimulator(options: RecognitionSimulatorOptions = {}): Promise<RecognitionSimulator> {
  const apiKey = options.apiKey ?? RECOGNITION_SIMULATOR_API_KEY;
  const state = {
    latencyMs: options.latencyMs ?? 0,
    mode: 'normal' as SimulatorMode,
    noisy: options.noisy ?? false,
    fluxEndOfTurnMs: options.fluxEndOfTurnMs ?? (null as number | null),
    fluxEagerEndOfTurnMs: options.fluxEagerEndOfTurnMs ?? (null as number | null),
  };
  const sessions: SimulatedRecognitionSession[] = [];
  const server = http.createServer((_req, res) => {
    res
      .writeHead(404, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ err_code: 'NOT_FOUND', err_msg: 'the simulator answers WebSocket upgrades only' }));
  });
  const sockets = new WebSocketServer({ noServer: true });
  sockets.on('error', () => undefined);

  // Upgraded and held connections are no longer the HTTP server's: close() ends them itself.
  const connections = new Set<Duplex>();
  server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    socket.on('error', () => undefined);
    if (state.mode === 'hanging') return; // the connection stays open until the client gives up
    if (state.mode === 'failing') return refuse(socket, 500, 'INTERNAL_SERVER_ERROR', 'simulated provider failure');
    if (req.headers.authorization !== `Token ${apiKey}`) return refuse(socket, 401, 'INVALID_AUTH', 'Invalid credentials.');
    const url = new URL(req.url ?? '/', 'http://simulator');
    if (url.pathname !== '/v1/listen' && url.pathname !== '/v2/listen') return refuse(socket, 404, 'NOT_FOUND', `no route ${url.pathname}`);
    const params = listenParams(url.pathname, url.searchParams);
    if (typeof params === 'string') return refuse(socket, 400, 'Bad Request', params);
    const { noisy, fluxEndOfTurnMs, fluxEagerEndOfTurnMs } = state;
    sockets.handleUpgrade(req, socket, head, (ws) =>
      sessions.push(serve(ws, { ...params, noisy, fluxEndOfTurnMs, fluxEagerEndOfTurnMs }, () => state.latencyMs)),
    );
  });

  const url = await listenOnLoopback(server, options);
  const running = {
    url,
    apiKey,
    sessions,
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      for (const socket of connections) socket.destroy();
      sockets.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return withLiveSettings(running, state, ['latencyMs', 'mode', 'noisy', 'fluxEndOfTurnMs', 'fluxEagerEndOfTurnMs']);
}

/** Answers an upgrade with an HTTP error in Deepgram's shape, and hangs up. */
function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ err_code: code, err_msg: message, request_id: randomUUID() });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

type ListenParams = Pick<
  SimulatedRecognitionSession,
  | 'path'
  | 'model'
  | 'language'
  | 'endpointingMs'
  | 'eotThreshold'
  | 'eagerEotThreshold'
  | 'utteranceEndMs'
  | 'interimResults'
  | 'punctuate'
  | 'smartFormat'
  | 'keyterms'
  | 'query'
>;

/** The query of a listen request, or why it is refused. Only telephony audio is simulated. */
function listenParams(path: ListenPath, query: URLSearchParams): ListenParams | string {
  const model = query.get('model');
  if (!model) return 'model is required';
  if (!STREAMING_MODELS[path].includes(model)) return `No such model/language/tier combination found: model '${model}' is not served on ${path}`;
  if (query.get('encoding') !== 'mulaw' || query.get('sample_rate') !== '8000') return 'the simulator takes encoding=mulaw and sample_rate=8000 only';
  const keyterms = query.getAll('keyterm');
  const all: Record<string, string[]> = {};
  for (const key of new Set(query.keys())) all[key] = query.getAll(key);
  const v1Only = { utteranceEndMs: null, interimResults: false, punctuate: false, smartFormat: false };
  if (path === '/v1/listen') {
    if ((query.get('channels') ?? '1') !== '1') return 'the simulator takes channels=1 only';
    const endpointing = query.get('endpointing');
    const endpointingMs = endpointing === null ? DEFAULT_ENDPOINTING_MS : endpointing === 'false' ? null : Number(endpointing);
    if (endpointingMs !== null && !(Number.isInteger(endpointingMs) && endpointingMs >= 0))
      return 'endpointing must be false or a whole number of milliseconds';
    const utteranceEnd = query.get('utterance_end_ms');
    const utteranceEndMs = utteranceEnd === null ? null : Number(utteranceEnd);
    if (utteranceEndMs !== null && !(Number.isInteger(utteranceEndMs) && utteranceEndMs > 0)) return 'utterance_end_ms must be a whole number of milliseconds';
    const flag = (name: string) => query.get(name) === 'true';
    return {
      path,
      model,
      language: query.get('language'),
      endpointingMs,
      eotThreshold: null,
      eagerEotThreshold: null,
      utteranceEndMs,
      interimResults: flag('interim_results'),
      punctuate: flag('punctuate'),
      smartFormat: flag('smart_format'),
      keyterms,
      query: all,
    };
  }
  const threshold = query.get('eot_threshold');
  const eotThreshold = threshold === null ? DEFAULT_EOT_THRESHOLD : Number(threshold);
  if (!(eotThreshold >= 0.5 && eotThreshold <= 1)) return 'eot_threshold must be between 0.5 and 1.0';
  const eager = query.get('eager_eot_threshold');
  const eagerEotThreshold = eager === null ? null : Number(eager);
  if (eagerEotThreshold !== null && !(eagerEotThreshold >= EAGER_EOT_RANGE[0] && eagerEotThreshold <= EAGER_EOT_RANGE[1]))
    return `eager_eot_threshold must be between ${EAGER_EOT_RANGE[0]} and ${EAGER_EOT_RANGE[1]}`;
  if (eagerEotThreshold !== null && eagerEotThreshold > eotThreshold) return 'eager_eot_threshold must be less than or equal to eot_threshold';
  return { path, model, language: null, endpointingMs: null, eotThreshold, eagerEotThreshold, ...v1Only, keyterms, query: all };
}

/** What a protocol makes of the turns heard and of the client's CloseStream. */
interface Dialect {
  opened(): void;
  /** The events of one chunk of audio; called for every chunk, also one without events. */
  hear(events: HeardEvent[]): void;
  closeStream(): void;
}

function serve(
  ws: WebSocket,
  params: ListenParams & { noisy: boolean; fluxEndOfTurnMs: number | null; fluxEagerEndOfTurnMs: number | null },
  latencyMs: () => number,
): SimulatedRecognitionSession {
  const { fluxEndOfTurnMs, fluxEagerEndOfTurnMs, ...listen } = params;
  const session: SimulatedRecognitionSession = {
    ...listen,
    audioSeconds: 0,
    turns: [],
    eagerTurns: [],
    turnsResumed: 0,
    keepAlives: 0,
    closeRequested: false,
    drop: () => ws.terminate(),
    fail: (description) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (params.path === '/v2/listen') ws.send(JSON.stringify({ type: 'Error', code: 'INTERNAL_SERVER_ERROR', description }));
      ws.close(1011, description);
    },
  };
  const outbox = new Outbox(ws);
  const requestId = randomUUID();
  // On a noisy line endpointing never hears its silence: a v1 turn then ends only at UtteranceEnd.
  const listener =
    params.path === '/v1/listen'
      ? new TurnListener(params.noisy ? null : params.endpointingMs)
      : new TurnListener(
          fluxEndOfTurnMs ?? eotSilenceMs(params.eotThreshold!),
          params.eagerEotThreshold === null ? null : (fluxEagerEndOfTurnMs ?? eotSilenceMs(params.eagerEotThreshold)),
        );
  const dialect =
    params.path === '/v1/listen' ? resultsDialect(session, outbox, requestId, latencyMs, listener) : turnInfoDialect(session, outbox, requestId, latencyMs);
  ws.on('error', () => undefined);
  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (session.closeRequested) return;
    if (isBinary) {
      const events = listener.hear(toBuffer(data));
      session.audioSeconds = listener.audioSeconds;
      dialect.hear(events);
      return;
    }
    const type = controlType(toBuffer(data).toString('utf8'));
    if (type === 'KeepAlive') session.keepAlives++;
    if (type === 'CloseStream') {
      session.closeRequested = true;
      // Both providers finalize what they heard before they close.
      dialect.hear(listener.endTurn());
      dialect.closeStream();
    }
  });
  dialect.opened();
  return session;
}

/**
 * Deepgram's `/v1/listen` messages. With `utterance_end_ms` and `interim_results=true`, an
 * `UtteranceEnd` follows once that much audio passed without a new word: after the turn's
 * `speech_final` on a quiet line, or on a noisy one (no `speech_final` ever) after the turn's
 * last words went out as an `is_final` piece (https://developers.deepgram.com/docs/utterance-end).
 */
function resultsDialect(session: SimulatedRecognitionSession, outbox: Outbox, requestId: string, latencyMs: () => number, listener: TurnListener): Dialect {
  // The turn's words before `pieceFrom` went out as is_final pieces; interims carry the rest.
  let pieceFrom = 0;
  let pieceStartSeconds = 0;
  // The end of the last word heard, while an UtteranceEnd for it is still to come.
  let lastWordEndSeconds: number | null = null;
  let turnText = '';
  const utteranceEndSeconds = session.utteranceEndMs !== null && session.interimResults ? session.utteranceEndMs / 1000 : null;
  const results = (transcript: string, isFinal: boolean, speechFinal: boolean, start: number, end: number) => ({
    type: 'Results',
    channel_index: [0, 1],
    start,
    duration: Math.max(0, end - start),
    is_final: isFinal,
    speech_final: speechFinal,
    from_finalize: false,
    channel: { alternatives: [{ transcript, confidence: transcript ? 0.99 : 0, words: [] }] },
    metadata: {
      request_id: requestId,
      model_info: { name: session.model, version: 'simulated', arch: session.model.split('-')[0] },
      model_uuid: '00000000-0000-0000-0000-000000000000',
    },
  });
  const endTurn = (text: string, startSeconds: number, endSeconds: number, speechFinal: boolean) => {
    const piece = text.slice(pieceFrom).trim();
    // The turn is reported when its end goes out: speech_final, or (noisy) the UtteranceEnd right after.
    outbox.send(
      results(piece, true, speechFinal, pieceFrom === 0 ? startSeconds : pieceStartSeconds, endSeconds),
      latencyMs(),
      speechFinal ? () => session.turns.push(text) : undefined,
    );
    pieceFrom = 0;
  };
  return {
    opened: () => undefined,
    hear(events) {
      for (const event of events) {
        if (event.kind === 'progress') {
          if (pieceFrom === 0) pieceStartSeconds = event.startSeconds;
          turnText = event.text;
          if (event.grew) lastWordEndSeconds = event.atSeconds;
          const piece = event.text.slice(pieceFrom).trim();
          if (!piece) continue;
          const final = event.atWordEnd && event.atSeconds - pieceStartSeconds >= PIECE_SECONDS;
          outbox.send(results(piece, final, false, pieceStartSeconds, event.atSeconds));
          if (final) {
            pieceFrom = event.text.length;
            pieceStartSeconds = event.atSeconds;
          }
        } else if (event.kind === 'end') {
          endTurn(event.text, event.startSeconds, event.endSeconds, true);
          turnText = '';
        }
      }
      if (utteranceEndSeconds === null || lastWordEndSeconds === null || session.closeRequested) return;
      if (listener.audioSeconds - lastWordEndSeconds < utteranceEndSeconds) return;
      const lastWordEnd = lastWordEndSeconds;
      lastWordEndSeconds = null;
      // A turn no speech_final ended (a noisy line) is finalized first, then the UtteranceEnd ends it.
      const unended = listener.endTurn()[0];
      if (unended) endTurn(unended.text, unended.startSeconds, listener.audioSeconds, false);
      const text = unended?.text ?? turnText;
      turnText = '';
      outbox.send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: lastWordEnd }, 0, unended ? () => session.turns.push(text) : undefined);
    },
    closeStream() {
      // Deepgram reports the audio's duration last, then closes.
      outbox.send({
        type: 'Metadata',
        transaction_key: 'deprecated',
        request_id: requestId,
        sha256: '',
        created: new Date().toISOString(),
        duration: session.audioSeconds,
        channels: 1,
        models: [session.model],
      });
      outbox.then((ws) => ws.close(1000));
    },
  };
}

/**
 * Deepgram Flux's `/v2/listen` messages (https://developers.deepgram.com/docs/flux/state): a
 * turn is StartOfTurn, Updates, and its EndOfTurn, after which `turn_index` goes up. With
 * `eager_eot_threshold`, the shorter silence it implies brings an EagerEndOfTurn (never
 * empty); then either the EndOfTurn of the same `turn_index` with the same transcript (the
 * caller stayed silent) or, when the caller speaks first, a TurnResumed and the turn goes on
 * (later EagerEndOfTurn and EndOfTurn of the same index carry the longer transcript).
 * EagerEndOfTurn and EndOfTurn go out `latencyMs` after the audio that decided them.
 */
function turnInfoDialect(session: SimulatedRecognitionSession, outbox: Outbox, requestId: string, latencyMs: () => number): Dialect {
  let sequence = 0;
  let turnIndex = 0;
  let turnStarted = false;
  const confidence: Record<string, number> = {
    EndOfTurn: Math.min(1, session.eotThreshold! + 0.05),
    // Past the eager threshold, short of the end-of-turn one.
    EagerEndOfTurn: session.eagerEotThreshold ?? 0,
  };
  const turnInfo = (event: string, transcript: string, start: number, end: number) => ({
    type: 'TurnInfo',
    request_id: requestId,
    sequence_id: ++sequence,
    event,
    turn_index: turnIndex,
    audio_window_start: start,
    audio_window_end: end,
    transcript,
    words: transcript.split(' ').map((word) => ({ word, confidence: 0.99 })),
    end_of_turn_confidence: confidence[event] ?? SPEAKING_CONFIDENCE,
    // Only flux-general-multi detects languages (https://developers.deepgram.com/docs/flux/state).
    ...(session.model === 'flux-general-multi' && transcript ? { languages: [detectLanguage(transcript)] } : {}),
    ...(event === 'EndOfTurn' ? { trigger: 'model' } : {}),
  });
  return {
    opened: () => outbox.send({ type: 'Connected', request_id: requestId, sequence_id: 0 }),
    hear(events) {
      for (const event of events) {
        if (event.kind === 'progress') {
          outbox.send(turnInfo(turnStarted ? 'Update' : 'StartOfTurn', event.text, event.startSeconds, event.atSeconds));
          turnStarted = true;
        } else if (event.kind === 'eager') {
          outbox.sendBy(turnInfo('EagerEndOfTurn', event.text, event.startSeconds, event.atSeconds), Date.now() + latencyMs(), () =>
            session.eagerTurns.push(event.text),
          );
        } else if (event.kind === 'resumed') {
          outbox.send(turnInfo('TurnResumed', event.text, event.startSeconds, event.atSeconds), 0, () => session.turnsResumed++);
        } else {
          outbox.sendBy(turnInfo('EndOfTurn', event.text, event.startSeconds, event.endSeconds), Date.now() + latencyMs(), () =>
            session.turns.push(event.text),
          );
          turnIndex++;
          turnStarted = false;
        }
      }
    },
    closeStream: () => outbox.then((ws) => ws.close(1000)),
  };
}

/**
 * A connection's outgoing messages in order: a message delayed by latency holds back the ones
 * queued after it, as a provider's single stream of results would.
 */
class Outbox {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly ws: WebSocket) {}

  /** Sends `message` `delayMs` after everything queued before it; `sent` runs once it went out. */
  send(message: object, delayMs = 0, sent?: () => void): void {
    this.then((ws) => {
      ws.send(JSON.stringify(message));
      sent?.();
    }, delayMs);
  }

  /**
   * Sends `message` at `dueAtMs` (epoch ms) or, when something queued before it is later, right
   * after that: a decision's latency counts from when the audio decided it, not from the
   * previous message (an EndOfTurn right after its EagerEndOfTurn does not wait twice).
   */
  sendBy(message: object, dueAtMs: number, sent?: () => void): void {
    this.chain = this.chain.then(async () => {
      const wait = dueAtMs - Date.now();
      if (wait > 0) await sleep(wait);
      if (this.ws.readyState !== WebSocket.OPEN) return;
      this.ws.send(JSON.stringify(message));
      sent?.();
    });
  }

  /** Runs `action` on the open socket after everything queued before it. */
  then(action: (ws: WebSocket) => void, delayMs = 0): void {
    this.chain = this.chain.then(async () => {
      if (delayMs > 0) await sleep(delayMs);
      if (this.ws.readyState === WebSocket.OPEN) action(this.ws);
    });
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** The `type` of a JSON control message, or null for anything else. */
function controlType(text: string): string | null {
  try {
    const message = JSON.parse(text) as { type?: unknown } | null;
    return typeof message?.type === 'string' ? message.type : null;
  } catch {
    return null;
  }
}
