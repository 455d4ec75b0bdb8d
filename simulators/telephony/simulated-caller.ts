import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { encodeUlaw, firstLoudSample, ULAW_SILENCE } from '../g711';
import { SpeechDecoder, speakText } from '../simulated-speech';
import { DtmfDetector } from '../dtmf-detector';
import type { ProviderStreamFrame } from '../../contracts/telephony-stream';
import { PLIVO_STREAM_CONTENT_TYPE, PLIVO_STREAM_FRAME_BYTES, PLIVO_STREAM_FRAME_MS, PLIVO_STREAM_SAMPLE_RATE, readStreamFrame } from './plivo-stream';

/**
 * One step of a simulated callee's conversation, run in order once the audio stream has
 * started. Delays are real milliseconds (audio plays in real time), never scaled.
 */
export type CallerStep =
  /**
   * Waits until the agent has said something since the previous line (or since the stream
   * started: the welcome) and has then been silent, nothing playing, for `afterAgentSilenceMs`
   * (default 400); then says the line.
   */
  | { say: string; afterAgentSilenceMs?: number }
  /** Waits until the agent starts speaking (playback starts) and says the line this long into it: barge-in. */
  | { say: string; talkOverAfterMs: number }
  /** Says the line now, without waiting for the agent (an answering machine's greeting). */
  | { say: string; unprompted: true }
  /** Plays a pure tone (an answering machine's beep: `hz` 1000, `ms` 500 by default) and records when it began (`beepedAt`). */
  | { beep: true; hz?: number; ms?: number }
  /** Stays silent this long. */
  | { pauseMs: number }
  /**
   * Presses keys (`0-9`, `*`, `#`), sent as the stream's `dtmf` events `gapMs` apart (default
   * 250), recorded in `digitsPressed`. Waits first as a `say` line does (the agent spoke, then
   * `afterAgentSilenceMs` of silence), or not at all when `unprompted`.
   */
  | { press: string; afterAgentSilenceMs?: number; unprompted?: true; gapMs?: number }
  /**
   * A phone menu (IVR): says `menu.say` at once (unprompted), then waits for the agent to press
   * one of the keys of `menu.options` (DTMF tones it hears, from when the prompt began; other
   * keys are ignored) and goes on with that key's steps, which may hold another `menu`. After
   * `timeoutMs` (default 10 000) from the prompt's end without such a key, `otherwise` runs
   * (default: nothing). Then the steps after the menu follow.
   */
  | { menu: CallerMenu }
  /** Waits until the keys heard since the previous line began include `waitForDigits` (e.g. a PIN), or `timeoutMs` (default 10 000) passes. */
  | { waitForDigits: string; timeoutMs?: number }
  /**
   * Hangs up now; with `afterAgentSilenceMs`, once the agent has said something since the
   * previous line and has then been silent that long (hanging up after hearing the answer).
   */
  | { hangUp: true; afterAgentSilenceMs?: number };

/** A phone menu of the simulated callee (see the `menu` step). */
export interface CallerMenu {
  say: string;
  options: Record<string, CallerStep[]>;
  timeoutMs?: number;
  otherwise?: CallerStep[];
}

/** What the simulated callee heard and said over the stream, as tests inspect it. */
export interface StreamedConversation {
  /** True once the stream's WebSocket opened. */
  streamConnected: boolean;
  /** When it opened: the callee's silence since the answer ends no earlier than this. */
  streamConnectedAt: Date | null;
  /**
   * Each utterance of the agent it heard: the text decoded between silences of at least 300 ms,
   * with when it began (its first sample louder than silence, as played into the callee's ear).
   */
  heard: { text: string; at: Date }[];
  /**
   * Each line it said, with when it began and when its last sample left the callee's mouth
   * (null until then): the start of the silence a caller waits through for the answer.
   */
  said: { text: string; at: Date; endedAt?: Date | null }[];
  /** How many `clearAudio` frames it obeyed. */
  clearedAudio: number;
  /** Keypad keys it heard as DTMF tones in the agent's audio, in order (tones are kept out of `heard`). */
  digitsHeard: string;
  /** Keys it pressed (`press` steps), in order. */
  digitsPressed: string;
  /** When a `beep` step began (an answering machine records what it hears after it); null without one. */
  beepedAt: Date | null;
}

export interface SimulatedCallerOptions {
  /** The `<Stream>` URL of the answer XML. */
  url: string;
  providerCallId: string;
  accountId: string;
  steps: CallerStep[];
  /** Written as the conversation goes (the simulator's record of the call). */
  record: StreamedConversation;
  /** The callee hung up (a `hangUp` step). */
  onHangUp: () => void;
  /** The stream could not open, or our side closed it: the call has nothing left to do. */
  onStreamEnded: (reason: string) => void;
  /** The network between the callee and the provider, one way: every frame takes this long each way (default 0). */
  legDelayMs?: number;
}

/** Silence at least this long ends an utterance of the agent. */
const UTTERANCE_GAP_MS = 300;
const DEFAULT_AFTER_AGENT_SILENCE_MS = 400;
const DEFAULT_PRESS_GAP_MS = 250;
const DEFAULT_DIGITS_TIMEOUT_MS = 10_000;
/** An answering machine's beep: 1 kHz for half a second, as loud as the simulated speech. */
const BEEP_HZ = 1_000;
const BEEP_MS = 500;
const BEEP_AMPLITUDE = 6_000;
/** A sample louder than this (16-bit magnitude, about -44 dBFS) is sound, not silence, to the callee's ear. */
const AUDIBLE_THRESHOLD = 200;
/** Mu-law bytes a millisecond (8 kHz). */
const BYTES_PER_MS = PLIVO_STREAM_SAMPLE_RATE / 1000;

/** Agent audio waiting to play, with when it arrived: a frame due before that cannot hold it (a late tick catches frames up). */
type Queued = { kind: 'audio'; bytes: Buffer; offset: number; arrivedAtMs: number } | { kind: 'checkpoint'; name: string };

interface Wait {
  done: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

class Stopped extends Error {}

/**
 * The callee's side of Plivo's bidirectional audio stream, as the simulated provider plays
 * it: opens the WebSocket, sends `start`, then every 20 ms of real time a `media` frame of
 * the callee's audio (silence, or a line of simulated speech). What we send with `playAudio`
 * plays back in real time (8000 bytes a second) into a speech decoder, so the simulator
 * records what the callee actually heard, and into a DTMF detector (keypad tones become
 * `digitsHeard`, never words); `clearAudio` drops what has not played yet, and a
 * `checkpoint` is answered `playedStream` when playback reaches it. Keys the callee presses
 * go as `dtmf` events. `stop` ends it.
 */
export class SimulatedCaller {
  private readonly socket: WebSocket;
  private readonly streamId = randomUUID();
  private readonly decoder = new SpeechDecoder(PLIVO_STREAM_SAMPLE_RATE);
  private readonly keys = new DtmfDetector();
  /** Played to the speech decoder instead of a frame of keypad tone: tones are no words. */
  private readonly silentFrame = Buffer.alloc(PLIVO_STREAM_FRAME_BYTES, ULAW_SILENCE);
  /** How many keys had been heard when the previous line began. */
  private digitsAtLineStart = 0;
  /** The frame being sent and the frame being played, reused (50 frames a second each way). */
  private readonly mouthFrame = Buffer.alloc(PLIVO_STREAM_FRAME_BYTES);
  private readonly earFrame = Buffer.alloc(PLIVO_STREAM_FRAME_BYTES);
  private readonly playback: Queued[] = [];
  private readonly speech: Buffer[] = [];
  private readonly waits: Wait[] = [];
  private sequenceNumber = 0;
  private ticker: NodeJS.Timeout | null = null;
  private startedAtMs = 0;
  private framesSent = 0;
  private stopping = false;
  private closed: Promise<void>;
  // Playback as the conversation steps see it.
  private playing = false;
  private playedBytes = 0;
  private lastPlayedAtMs = 0;
  private playbackStartedAtMs: number | null = null;
  private utterance: { text: string; at: Date } | null = null;
  /** When the sound now playing began (its first loud sample); null while silence plays. */
  private soundSinceMs: number | null = null;
  /** The line whose speech is being sent: its `endedAt` is set with its last sample. */
  private speakingLine: { endedAt?: Date | null } | null = null;
  // Where the previous line of the callee ended (the stream's start before the first).
  private lineEndedAtMs = 0;
  private playedBytesAtLineEnd = 0;

  constructor(private readonly options: SimulatedCallerOptions) {
    this.socket = new WebSocket(options.url);
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('error', () => undefined); // followed by close
    this.socket.once('open', () => this.opened());
    this.socket.once('close', (code) => {
      const wasOpen = options.record.streamConnected;
      this.shutDown();
      if (!this.stopping) options.onStreamEnded(wasOpen ? `the stream closed (${code})` : 'the stream did not connect');
    });
    this.socket.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
  }

  /** The call ended: sends `stop` and closes the stream. */
  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.shutDown();
      if (this.socket.readyState === WebSocket.OPEN) {
        this.send({ event: 'stop', sequenceNumber: this.sequenceNumber++ });
        this.socket.close(1000, 'call ended');
      } else this.socket.terminate();
    }
    await this.closed;
  }

  /** The simulator is shutting down: the socket goes at once, without a goodbye. */
  async terminate(): Promise<void> {
    this.stopping = true;
    this.shutDown();
    this.socket.terminate();
    await this.closed;
  }

  private opened(): void {
    if (this.stopping) return;
    const { record, providerCallId, accountId } = this.options;
    record.streamConnected = true;
    record.streamConnectedAt = new Date();
    this.send({
      event: 'start',
      sequenceNumber: this.sequenceNumber++,
      start: {
        callId: providerCallId,
        streamId: this.streamId,
        accountId,
        tracks: ['inbound'],
        mediaFormat: { encoding: PLIVO_STREAM_CONTENT_TYPE, sampleRate: PLIVO_STREAM_SAMPLE_RATE },
      },
    });
    this.startedAtMs = Date.now();
    this.lastPlayedAtMs = this.startedAtMs;
    this.lineEndedAtMs = this.startedAtMs;
    this.ticker = setInterval(() => this.tick(), PLIVO_STREAM_FRAME_MS);
    void this.converse();
  }

  private async converse(): Promise<void> {
    try {
      await this.runSteps(this.options.steps);
      // After the last step the callee stays on, silent, until the call ends.
    } catch (error) {
      if (!(error instanceof Stopped)) throw error;
    }
  }

  /** Runs `steps` in order; answers true once the callee hung up (nothing runs after that). */
  private async runSteps(steps: CallerStep[]): Promise<boolean> {
    for (const step of steps) {
      if ('hangUp' in step) {
        if (step.afterAgentSilenceMs !== undefined) await this.agentSpokeThenSilent(step.afterAgentSilenceMs);
        this.options.onHangUp();
        return true;
      }
      if ('press' in step) {
        if (!step.unprompted) await this.agentSpokeThenSilent(step.afterAgentSilenceMs ?? DEFAULT_AFTER_AGENT_SILENCE_MS);
        await this.press(step.press, step.gapMs ?? DEFAULT_PRESS_GAP_MS);
        continue;
      }
      if ('menu' in step) {
        const branch = await this.menu(step.menu);
        if (await this.runSteps(branch)) return true;
        continue;
      }
      if ('waitForDigits' in step) {
        const from = this.digitsAtLineStart;
        const until = Date.now() + (step.timeoutMs ?? DEFAULT_DIGITS_TIMEOUT_MS);
        await this.when(() => this.options.record.digitsHeard.slice(from).includes(step.waitForDigits) || Date.now() >= until);
        continue;
      }
      if ('beep' in step) {
        await this.beep(step.hz ?? BEEP_HZ, step.ms ?? BEEP_MS);
        continue;
      }
      if ('unprompted' in step) {
        await this.say(step.say);
        continue;
      }
      if ('pauseMs' in step) {
        const until = Date.now() + step.pauseMs;
        await this.when(() => Date.now() >= until);
        continue;
      }
      if ('talkOverAfterMs' in step) {
        const since = this.lineEndedAtMs;
        await this.when(() => this.playing && this.playbackStartedAtMs !== null && this.playbackStartedAtMs >= since);
        const at = this.playbackStartedAtMs! + step.talkOverAfterMs;
        await this.when(() => Date.now() >= at);
      } else await this.agentSpokeThenSilent(step.afterAgentSilenceMs ?? DEFAULT_AFTER_AGENT_SILENCE_MS);
      await this.say(step.say);
    }
    return false;
  }

  /** Says the menu's prompt, then answers the steps of the first offered key heard since it began (`otherwise` after the timeout). */
  private async menu(menu: CallerMenu): Promise<CallerStep[]> {
    const from = this.options.record.digitsHeard.length;
    const chosen = () => [...this.options.record.digitsHeard.slice(from)].find((key) => Object.hasOwn(menu.options, key));
    await this.say(menu.say);
    const until = Date.now() + (menu.timeoutMs ?? DEFAULT_DIGITS_TIMEOUT_MS);
    await this.when(() => chosen() !== undefined || Date.now() >= until);
    const key = chosen();
    return key === undefined ? (menu.otherwise ?? []) : menu.options[key]!;
  }

  /** Presses `keys` one by one, `gapMs` apart, as the provider reports keys: `dtmf` events on the stream. */
  private async press(keys: string, gapMs: number): Promise<void> {
    for (const [index, digit] of [...keys].entries()) {
      if (index > 0) {
        const at = Date.now() + gapMs;
        await this.when(() => Date.now() >= at);
      }
      this.options.record.digitsPressed += digit;
      this.send({
        event: 'dtmf',
        sequenceNumber: this.sequenceNumber++,
        streamId: this.streamId,
        dtmf: { track: 'inbound', digit, timestamp: String(Date.now() - this.startedAtMs) },
      });
    }
    this.lineEndedAtMs = Date.now();
    this.playedBytesAtLineEnd = this.playedBytes;
  }

  /** Resolves once the agent has said something since the previous line (or the stream's start) and then been silent, nothing playing, for `silenceMs`. */
  private agentSpokeThenSilent(silenceMs: number): Promise<void> {
    const playedBefore = this.playedBytesAtLineEnd;
    return this.when(() => this.playedBytes > playedBefore && !this.playing && Date.now() - this.lastPlayedAtMs >= silenceMs);
  }

  /** A pure tone at `hz` for `ms`, as answering machines beep before they record. */
  private async beep(hz: number, ms: number): Promise<void> {
    this.options.record.beepedAt = new Date();
    this.speakingLine = null;
    const samples = new Int16Array(Math.round((PLIVO_STREAM_SAMPLE_RATE * ms) / 1000));
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(BEEP_AMPLITUDE * Math.sin((2 * Math.PI * hz * i) / PLIVO_STREAM_SAMPLE_RATE));
    this.speech.push(encodeUlaw(samples));
    await this.when(() => this.speech.length === 0);
    this.lineEndedAtMs = Date.now();
    this.playedBytesAtLineEnd = this.playedBytes;
  }

  private async say(text: string): Promise<void> {
    const line = { text, at: new Date(), endedAt: null };
    this.options.record.said.push(line);
    this.speakingLine = line;
    this.digitsAtLineStart = this.options.record.digitsHeard.length;
    this.speech.push(encodeUlaw(speakText(text, { sampleRate: PLIVO_STREAM_SAMPLE_RATE })));
    await this.when(() => this.speech.length === 0);
    this.lineEndedAtMs = Date.now();
    this.playedBytesAtLineEnd = this.playedBytes;
  }

  /** Resolves at the first tick where `done` holds. */
  private when(done: () => boolean): Promise<void> {
    if (this.stopping) return Promise.reject(new Stopped());
    return new Promise((resolve, reject) => this.waits.push({ done, resolve, reject }));
  }

  /**
   * Sends the frames due by now (a late timer catches up), then lets waiting steps go on. A
   * frame goes out once its 20 ms have been spoken, as a phone's audio reaches the provider and
   * the provider's stream: sent at its start, a line's last frame arrived before the sample
   * the callee counts as the line's end, and the callee measured the agent's answer up to 20 ms
   * shorter than the agent's node did.
   */
  private tick(): void {
    const due = Math.floor((Date.now() - this.startedAtMs) / PLIVO_STREAM_FRAME_MS);
    while (this.framesSent < due && !this.stopping) {
      const frameAtMs = this.startedAtMs + this.framesSent * PLIVO_STREAM_FRAME_MS;
      this.sendFrame(frameAtMs);
      this.playFrame(frameAtMs);
    }
    for (const wait of this.waits.splice(0)) {
      if (wait.done()) wait.resolve();
      else this.waits.push(wait);
    }
  }

  private sendFrame(frameAtMs: number): void {
    // One buffer for every frame: its bytes are copied out (base64) before the next frame.
    const payload = this.mouthFrame.fill(ULAW_SILENCE);
    let filled = 0;
    while (filled < PLIVO_STREAM_FRAME_BYTES && this.speech.length > 0) {
      const head = this.speech[0]!;
      const taken = head.copy(payload, filled, 0, PLIVO_STREAM_FRAME_BYTES - filled);
      filled += taken;
      if (taken === head.length) this.speech.shift();
      else this.speech[0] = head.subarray(taken);
    }
    // The line's last sample left in this frame: its end is where that sample ends.
    if (filled > 0 && this.speech.length === 0 && this.speakingLine) {
      this.speakingLine.endedAt = new Date(frameAtMs + filled / BYTES_PER_MS);
      this.speakingLine = null;
    }
    this.framesSent++;
    this.send({
      event: 'media',
      sequenceNumber: this.sequenceNumber++,
      streamId: this.streamId,
      media: { track: 'inbound', timestamp: String(frameAtMs - this.startedAtMs), chunk: this.framesSent, payload: payload.toString('base64') },
    });
  }

  /** Plays 20 ms of the queued agent audio into the callee's ear (the decoder). */
  private playFrame(frameAtMs: number): void {
    const frame = this.earFrame.fill(ULAW_SILENCE);
    let filled = 0;
    for (;;) {
      const head = this.playback[0];
      if (!head) break;
      if (head.kind === 'checkpoint') {
        this.playback.shift();
        this.send({ event: 'playedStream', sequenceNumber: this.sequenceNumber++, streamId: this.streamId, name: head.name });
        continue;
      }
      if (filled === PLIVO_STREAM_FRAME_BYTES || head.arrivedAtMs > frameAtMs) break;
      const taken = head.bytes.copy(frame, filled, head.offset, head.offset + PLIVO_STREAM_FRAME_BYTES - filled);
      filled += taken;
      head.offset += taken;
      if (head.offset >= head.bytes.length) this.playback.shift();
    }
    const wasPlaying = this.playing;
    this.playing = filled > 0;
    if (this.playing) {
      if (!wasPlaying) this.playbackStartedAtMs = frameAtMs;
      this.playedBytes += filled;
      this.lastPlayedAtMs = frameAtMs + PLIVO_STREAM_FRAME_MS;
    }
    // Where the sound began, to the sample: the decoder finds speech a window later.
    const loud = firstLoudSample(frame, AUDIBLE_THRESHOLD);
    if (loud === -1) this.soundSinceMs = null;
    else this.soundSinceMs ??= frameAtMs + loud / BYTES_PER_MS;
    // Keypad tones are recognised as keys, and the speech decoder hears silence in their stead.
    const keys = this.keys.pushMulaw(frame);
    this.options.record.digitsHeard += keys.digits;
    this.hear(this.decoder.pushMulaw(keys.tone ? this.silentFrame : frame), frameAtMs);
  }

  private hear(heard: { text: string; voiced: boolean; trailingSilenceMs: number }, frameAtMs: number): void {
    if (heard.voiced && !this.utterance) this.utterance = { text: '', at: new Date(this.soundSinceMs ?? frameAtMs) };
    if (!this.utterance) return;
    this.utterance.text += heard.text;
    if (heard.trailingSilenceMs >= UTTERANCE_GAP_MS) this.endUtterance();
  }

  private endUtterance(): void {
    if (this.utterance && this.utterance.text !== '') this.options.record.heard.push(this.utterance);
    this.utterance = null;
  }

  /** A frame from the provider, after the leg's delay (frames keep their order: the delay is the same for each). */
  private receive(text: string): void {
    const delay = this.options.legDelayMs ?? 0;
    if (delay > 0) setTimeout(() => this.receiveNow(text), delay);
    else this.receiveNow(text);
  }

  private receiveNow(text: string): void {
    const frame = readStreamFrame(text);
    if (!frame || this.stopping) return;
    switch (frame.event) {
      case 'playAudio': {
        if (frame.contentType !== null && frame.contentType !== PLIVO_STREAM_CONTENT_TYPE) return;
        const bytes = Buffer.from(frame.payload, 'base64');
        if (bytes.length > 0) this.playback.push({ kind: 'audio', bytes, offset: 0, arrivedAtMs: Date.now() });
        return;
      }
      case 'checkpoint':
        this.playback.push({ kind: 'checkpoint', name: frame.name });
        return;
      case 'clearAudio':
        // Queued checkpoints go too: playback never reaches them.
        this.playback.length = 0;
        this.options.record.clearedAudio++;
        this.send({ event: 'clearedAudio', sequenceNumber: this.sequenceNumber++, streamId: this.streamId });
        return;
    }
  }

  private shutDown(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    this.endUtterance();
    for (const wait of this.waits.splice(0)) wait.reject(new Stopped());
  }

  /** A frame to the provider, after the leg's delay; `stop` goes at once, since the socket closes behind it. */
  private send(frame: ProviderStreamFrame): void {
    const delay = this.options.legDelayMs ?? 0;
    const text = JSON.stringify(frame);
    const write = () => {
      if (this.socket.readyState === WebSocket.OPEN) this.socket.send(text);
    };
    if (delay > 0 && frame.event !== 'stop') setTimeout(write, delay);
    else write();
  }
}
