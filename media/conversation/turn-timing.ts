import { mulawToLinear } from '../../providers/audio/mulaw';

/**
 * Where a caller's wait for the answer went, as the media node sees it (docs/decisions/0220):
 * from the caller's last sound reaching this node to the answer's first audio leaving it. The
 * telephony legs (the caller's network and the provider's) are outside: the call's caller-side
 * figure is this plus both legs.
 */
export interface TurnBreakdown {
  /** The recognizer's wait for the end of the turn: from the last sound to the audio where it decided (Flux's `audio_window_end`). */
  end_of_turn_ms: number;
  /** From that audio reaching this node to the end of turn arriving (the recognizer's processing and its network); null when the provider gives no audio position. */
  recogniser_ms: number | null;
  /** The language model's time to first token, from the request. */
  model_first_token_ms: number;
  /** From the first token to the first sentence complete (the model writing it). */
  model_first_sentence_ms: number;
  /** The speech server's time to first byte for the first sentence. */
  speech_first_byte_ms: number;
  /** The rest: our own work and queueing (and the agent's tools, when a tool call came before the words). */
  ours_ms: number;
  /** The whole: from the caller's last sound arriving to the answer's first audio sent. */
  voice_to_voice_ms: number;
}

/** The caller's turn as it ended: when their last sound arrived and the recognizer's two stages. */
export interface TurnEnd {
  voiceEndedAtMs: number;
  endOfTurnMs: number;
  recogniserMs: number | null;
}

/** A sample louder than this (16-bit magnitude, about -36 dBFS) is the caller's voice; below it, line noise or silence. */
const VOICE_THRESHOLD = 500;
const MAGNITUDE = Int16Array.from({ length: 256 }, (_, byte) => Math.abs(mulawToLinear(byte)));
const BYTES_PER_MS = 8;
/** Arrivals kept to map the recognizer's audio position to wall time: a minute of 20 ms frames. */
const ARRIVALS_KEPT = 3_000;

/**
 * Follows the caller's audio as it reaches the node (in the order the recognizer gets it), so
 * that a turn's end can be split: how long after the caller's last sound the recognizer
 * decided the turn was over (in audio time, from its own report), and how long its decision
 * took to arrive here.
 */
export class CallerVoice {
  /** Audio received so far, in ms of audio. */
  private audioMs = 0;
  private lastVoiceAudioMs: number | null = null;
  private lastVoiceAtMs: number | null = null;
  /** The end of each chunk in audio ms, and when it arrived. */
  private readonly arrivals: { endAudioMs: number; atMs: number }[] = [];

  heard(mulaw: Uint8Array, nowMs: number): void {
    const startMs = this.audioMs;
    this.audioMs += mulaw.length / BYTES_PER_MS;
    this.arrivals.push({ endAudioMs: this.audioMs, atMs: nowMs });
    if (this.arrivals.length > ARRIVALS_KEPT) this.arrivals.splice(0, this.arrivals.length - ARRIVALS_KEPT);
    for (let i = mulaw.length - 1; i >= 0; i--) {
      if (MAGNITUDE[mulaw[i]!]! > VOICE_THRESHOLD) {
        this.lastVoiceAudioMs = startMs + (i + 1) / BYTES_PER_MS;
        // The chunk arrived whole: its last voiced sample arrived with it.
        this.lastVoiceAtMs = nowMs;
        return;
      }
    }
  }

  /**
   * The turn ended now. `audioEndSeconds`: the audio position the recognizer decided at, when
   * it says (Flux's `audio_window_end`); without it, the whole wait counts as end of turn.
   */
  turnEnded(nowMs: number, audioEndSeconds: number | null): TurnEnd {
    const voiceEndedAtMs = this.lastVoiceAtMs ?? nowMs;
    if (audioEndSeconds === null || this.lastVoiceAudioMs === null) return { voiceEndedAtMs, endOfTurnMs: nowMs - voiceEndedAtMs, recogniserMs: null };
    const decidedAtAudioMs = Math.min(audioEndSeconds * 1000, this.audioMs);
    const arrivedAtMs = this.arrivals.find((a) => a.endAudioMs >= decidedAtAudioMs)?.atMs ?? nowMs;
    const recogniserMs = Math.max(0, nowMs - arrivedAtMs);
    return { voiceEndedAtMs, endOfTurnMs: Math.max(0, nowMs - voiceEndedAtMs - recogniserMs), recogniserMs };
  }
}

/** One reply's timestamps, filled in as it goes; `breakdown` once its first audio went out. */
export class ReplyTiming {
  private requestSentAtMs: number | null = null;
  private firstTokenAtMs: number | null = null;
  private spokenRound: { sentAtMs: number; firstTokenAtMs: number } | null = null;
  private firstSentenceAtMs: number | null = null;
  private synthesisStartedAtMs: number | null = null;

  /**
   * `turn` null: a speculative reply, started on an early end of turn (./speculation.ts); its
   * turn is known once confirmed (`confirm`).
   */
  constructor(private turn: TurnEnd | null) {}

  /** The speculative reply's turn ended as guessed: its wait is measured from this turn. */
  confirm(turn: TurnEnd): void {
    this.turn = turn;
  }

  modelRequested(nowMs: number): void {
    this.requestSentAtMs = nowMs;
    this.firstTokenAtMs = null;
  }

  modelFirstToken(nowMs: number): void {
    this.firstTokenAtMs ??= nowMs;
  }

  /** A sentence went to speech: the first one fixes the model's share (the round that spoke). */
  sentence(nowMs: number): void {
    if (this.firstSentenceAtMs !== null || this.requestSentAtMs === null) return;
    this.firstSentenceAtMs = nowMs;
    this.spokenRound = { sentAtMs: this.requestSentAtMs, firstTokenAtMs: this.firstTokenAtMs ?? nowMs };
  }

  synthesisStarted(nowMs: number): void {
    this.synthesisStartedAtMs ??= nowMs;
  }

  /**
   * The wait split into stages; null before the turn is known. Only what happened after the
   * turn's end reached this node is the caller's wait: a speculative reply's work before it
   * (the model's first token, its first sentence, even the speech's first byte) counts as 0.
   */
  breakdown(firstAudioAtMs: number): TurnBreakdown | null {
    const { turn } = this;
    if (!turn) return null;
    // When the turn's end arrived here: the caller's last sound, the recognizer's wait and its trip.
    const turnArrivedAtMs = turn.voiceEndedAtMs + turn.endOfTurnMs + (turn.recogniserMs ?? 0);
    const after = (atMs: number) => Math.max(atMs, turnArrivedAtMs);
    const voiceToVoice = firstAudioAtMs - turn.voiceEndedAtMs;
    const round = this.spokenRound;
    const modelFirstToken = round ? after(round.firstTokenAtMs) - after(round.sentAtMs) : 0;
    const modelFirstSentence = round && this.firstSentenceAtMs !== null ? after(this.firstSentenceAtMs) - after(round.firstTokenAtMs) : 0;
    const speech = this.synthesisStartedAtMs !== null ? firstAudioAtMs - after(this.synthesisStartedAtMs) : 0;
    const stages = turn.endOfTurnMs + (turn.recogniserMs ?? 0) + modelFirstToken + modelFirstSentence + speech;
    return {
      end_of_turn_ms: Math.round(turn.endOfTurnMs),
      recogniser_ms: turn.recogniserMs === null ? null : Math.round(turn.recogniserMs),
      model_first_token_ms: Math.round(modelFirstToken),
      model_first_sentence_ms: Math.round(modelFirstSentence),
      speech_first_byte_ms: Math.round(speech),
      ours_ms: Math.round(Math.max(0, voiceToVoice - stages)),
      voice_to_voice_ms: Math.round(voiceToVoice),
    };
  }
}
