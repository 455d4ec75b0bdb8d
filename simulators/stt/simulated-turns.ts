import { SpeechDecoder } from '../simulated-speech';

/** Telephony audio: mu-law, one byte a sample at 8 kHz. */
export const SAMPLE_RATE = 8000;

/** A pause this long inside a turn separates words, as a recognizer hears one. */
const WORD_GAP_MS = 150;
/** While speech arrives without new characters, progress repeats at most this often (audio time). */
const PROGRESS_EVERY_MS = 100;

/** What a simulated recognizer heard in one chunk of audio, in order. */
export type HeardEvent =
  | {
      kind: 'progress';
      /** The turn's words so far, whitespace normalized; never empty. */
      text: string;
      /** True when this chunk completed new characters (else a periodic repeat). */
      grew: boolean;
      /** The raw text so far ends in whitespace: a word just ended. */
      atWordEnd: boolean;
      /** Where the turn's speech began, and the end of the chunk, in audio seconds since the stream began. */
      startSeconds: number;
      atSeconds: number;
    }
  | {
      /** The turn's speech was followed by the early-end silence (only with `eagerSilenceMs`); once until the caller speaks again. */
      kind: 'eager';
      /** The turn so far, whitespace normalized; never empty. */
      text: string;
      startSeconds: number;
      atSeconds: number;
    }
  | {
      /** The caller spoke again after an `eager` of the same turn (reported before that speech's progress). */
      kind: 'resumed';
      /** The turn as it was at the `eager`. */
      text: string;
      startSeconds: number;
      atSeconds: number;
    }
  | {
      kind: 'end';
      /** The whole turn, whitespace normalized; never empty (empty turns end silently). */
      text: string;
      /** Where the turn's speech began and where the end was decided, in audio seconds. */
      startSeconds: number;
      endSeconds: number;
    };

export function normalizeTranscript(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Turns of a caller in simulated speech (tones, see simulators/simulated-speech.ts): the
 * characters heard so far and the end of a turn once `endSilenceMs` of silence followed speech;
 * with `eagerSilenceMs` (at most `endSilenceMs`), an early end at that shorter silence, and a
 * resumption when speech comes again before the end.
 * Everything is measured in audio time (the samples received), never wall clock, so a test may
 * send audio faster than real time and still get the same turns.
 */
export class TurnListener {
  private readonly decoder = new SpeechDecoder(SAMPLE_RATE);
  private samples = 0;
  private turnText = '';
  private turnStartSeconds: number | null = null;
  private lastProgressMs = 0;
  private silenceBeforeMs = 0;
  /** The text of the turn's early end, while the caller has not spoken again. */
  private eagerText: string | null = null;

  /** `endSilenceMs` null: turns never end on silence (the stream's close discards them). `eagerSilenceMs` null: no early ends. */
  constructor(
    private readonly endSilenceMs: number | null,
    private readonly eagerSilenceMs: number | null = null,
  ) {}

  get audioSeconds(): number {
    return this.samples / SAMPLE_RATE;
  }

  hear(mulaw: Buffer): HeardEvent[] {
    const chunkStartSeconds = this.audioSeconds;
    const heard = this.decoder.pushMulaw(mulaw);
    this.samples += mulaw.length;
    const nowMs = this.audioSeconds * 1000;
    const events: HeardEvent[] = [];
    if (heard.voiced && this.eagerText !== null) {
      events.push({ kind: 'resumed', text: this.eagerText, startSeconds: this.turnStartSeconds!, atSeconds: chunkStartSeconds });
      this.eagerText = null;
    }
    if (heard.voiced && this.turnStartSeconds === null) this.turnStartSeconds = chunkStartSeconds;
    // Pauses are seen between chunks (telephony frames are 20 ms), not inside one.
    if (heard.voiced && this.turnText && this.silenceBeforeMs >= WORD_GAP_MS) this.turnText += ' ';
    this.silenceBeforeMs = heard.trailingSilenceMs;
    this.turnText += heard.text;
    const periodic = heard.voiced && nowMs - this.lastProgressMs >= PROGRESS_EVERY_MS;
    // The turn's text is only worked out when progress may go out (not for every frame).
    const text = this.turnStartSeconds !== null && (heard.text || periodic) ? normalizeTranscript(this.turnText) : '';
    if (text) {
      this.lastProgressMs = nowMs;
      events.push({
        kind: 'progress',
        text,
        grew: heard.text !== '',
        atWordEnd: /\s$/.test(this.turnText),
        startSeconds: this.turnStartSeconds!,
        atSeconds: this.audioSeconds,
      });
    }
    if (this.eagerSilenceMs !== null && this.eagerText === null && this.turnStartSeconds !== null && heard.trailingSilenceMs >= this.eagerSilenceMs) {
      const soFar = normalizeTranscript(this.turnText);
      if (soFar) {
        this.eagerText = soFar;
        events.push({ kind: 'eager', text: soFar, startSeconds: this.turnStartSeconds, atSeconds: this.audioSeconds });
      }
    }
    if (this.endSilenceMs !== null && heard.trailingSilenceMs >= this.endSilenceMs) events.push(...this.endTurn());
    return events;
  }

  /** Ends the turn in progress whatever the silence (the stream is closing). */
  endTurn(): HeardEvent[] {
    const text = normalizeTranscript(this.turnText);
    const start = this.turnStartSeconds;
    this.turnText = '';
    this.turnStartSeconds = null;
    this.eagerText = null;
    // A turn of noise without a single character is no turn at all.
    return start !== null && text ? [{ kind: 'end', text, startSeconds: start, endSeconds: this.audioSeconds }] : [];
  }
}
