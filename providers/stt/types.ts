/**
 * Streaming speech recognition as the conversation engine uses it: telephony audio (mu-law,
 * 8 kHz) goes in as it arrives; interim text and the end of each caller turn come back.
 * `provider_a` detects the language and the end of turn itself (`turnDetection`);
 * `provider_b` is told the language and ends a turn after `endpointingMs` of silence.
 */
export interface Transcriber {
  open(settings: RecognitionSettings, handlers: RecognitionHandlers): Promise<RecognitionStream>;
}

export type TranscriberProvider = 'provider_a' | 'provider_b';
export type TurnDetection = 'responsive' | 'balanced' | 'patient';

export interface RecognitionSettings {
  provider: TranscriberProvider;
  model: string;
  /** provider_b: the caller's language (BCP-47). */
  language: string;
  /** provider_a: how soon a pause ends the caller's turn. */
  turnDetection: TurnDetection;
  /** provider_b: silence that ends a turn. */
  endpointingMs: number;
  /** Words to expect (names, products), passed to the recognizer. */
  keyterms: string[];
  /**
   * provider_a only: the end-of-turn confidence (0.3 to 0.9) at which the recognizer sends an
   * early, revocable end of turn (`onEagerTurnEnd`, then `onTurnEnd` or `onTurnResumed`), so
   * that a reply can be prepared while the caller may still go on. Never above the turn
   * detection's own threshold (it is lowered to it). Absent: no early ends (the default).
   */
  eagerEndOfTurnThreshold?: number;
}

export interface RecognitionHandlers {
  /** The caller's words so far in the current turn (interim; replaces the previous interim). */
  onInterim(text: string): void;
  /**
   * The caller finished a turn. `language` when the provider detects it (provider_a).
   * `turnIndex` counts the stream's turns from 0; an early end of the same turn had the same index.
   * `audioEndSeconds`: the position in the stream's audio (seconds since it opened) where the
   * provider decided the turn was over, when it says (Flux's `audio_window_end`, the end of a
   * Nova final's window); what the media node times the recognizer's share by.
   */
  onTurnEnd(turn: { text: string; language: string | null; turnIndex: number; audioEndSeconds?: number | null }): void;
  /**
   * provider_a with `eagerEndOfTurnThreshold`: the caller has probably finished turn
   * `turnIndex` with `text`. Followed, for the same `turnIndex`, by exactly one of: `onTurnEnd`
   * with this very `text` (the guess held), or `onTurnResumed` (the caller went on; a later
   * early end or `onTurnEnd` of the same index carries the longer text). Nothing follows once
   * the stream is closed or failed.
   */
  onEagerTurnEnd?(turn: { text: string; language: string | null; turnIndex: number }): void;
  /** The latest `onEagerTurnEnd` of turn `turnIndex` is void: the caller went on speaking. */
  onTurnResumed?(turn: { turnIndex: number }): void;
  /** The recognizer failed or closed unexpectedly; the stream is unusable. */
  onError(error: Error): void;
}

export interface RecognitionStream {
  /** Mu-law 8 kHz bytes, in order. */
  sendAudio(mulaw: Buffer): void;
  /** Ends the stream (a turn in progress is not reported); answers the audio seconds sent. */
  close(): Promise<{ audioSeconds: number }>;
}
