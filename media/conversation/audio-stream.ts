/**
 * One live call's audio as the conversation engine sees it, whatever carries it: the
 * telephony provider's bidirectional stream (plivo-style JSON frames) or a browser's
 * WebSocket. Audio is mu-law at 8 kHz both ways.
 */
export interface CallAudioStream {
  /** The provider's id of the stream (for logs). */
  readonly streamId: string;
  /** The telephony provider's id of the call (its stream's `start`); a browser's stream has none. */
  readonly providerCallId?: string;
  /** Caller audio as it arrives (20 ms frames from telephony). */
  onAudio(listener: (mulaw: Buffer) => void): void;
  /** Queues agent audio for playback at the far end. */
  play(mulaw: Buffer): void;
  /**
   * Marks the current end of the queued audio; `onPlayed(name)` fires when the far end has
   * played everything up to the mark (plivo's checkpoint / playedStream).
   */
  mark(name: string): void;
  onPlayed(listener: (name: string) => void): void;
  /** Drops every queued, unplayed byte at once (barge-in); pending marks are never played. */
  clear(): void;
  /** The far end went away (hang-up, network); fires once. */
  onClose(listener: (reason: string) => void): void;
  /** Closes from our side (the call is over). */
  close(): void;
  /**
   * Keypad digits the caller pressed (`0-9`, `*`, `#`, `A-D`), one a call, as the provider
   * reports them (Plivo's stream `dtmf` events); a stream without digits (the browser's) never calls it.
   */
  onDigits?(listener: (digit: string) => void): void;
  /** Messages sent to a browser client (transcript lines); a telephony stream ignores them. */
  sendText?(message: Record<string, unknown>): void;
}
