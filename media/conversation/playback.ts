/**
 * Where the far end's playback is. Telephony providers play queued audio back to back in
 * real time and report only checkpoints, so what the caller has heard at a moment is worked
 * out from when each piece was queued and how long it lasts: a piece starts when the one
 * before it ends (or when it is queued, if nothing was playing).
 */
interface Piece {
  text: string;
  startMs: number;
  endMs: number;
}

export class PlaybackTimeline {
  private pieces: Piece[] = [];
  private freeAtMs = 0;

  /** Queues `durationMs` of audio saying `text` at `nowMs`; answers when it starts playing. */
  queue(text: string, durationMs: number, nowMs: number): number {
    const startMs = Math.max(nowMs, this.freeAtMs);
    this.freeAtMs = startMs + durationMs;
    this.pieces.push({ text, startMs, endMs: this.freeAtMs });
    return startMs;
  }

  /** Extends the last piece (audio of one sentence arrives in several chunks). */
  extend(durationMs: number, nowMs: number): number {
    const last = this.pieces.at(-1);
    if (!last) return this.queue('', durationMs, nowMs);
    const startMs = Math.max(nowMs, this.freeAtMs);
    // A gap (synthesis slower than playback) makes the piece longer by the gap: the far end was silent.
    this.freeAtMs = startMs + durationMs;
    last.endMs = this.freeAtMs;
    return startMs;
  }

  /** Audio is still playing at `nowMs`. */
  playing(nowMs: number): boolean {
    return nowMs < this.freeAtMs;
  }

  /** When the queued audio ends (or ended). */
  get endsAtMs(): number {
    return this.freeAtMs;
  }

  /**
   * The text heard by `nowMs` since the last `reset`: whole pieces that ended, and the words
   * of the current piece in proportion to the time played (cut at a word boundary).
   */
  heard(nowMs: number): string {
    const parts: string[] = [];
    for (const piece of this.pieces) {
      if (piece.startMs >= nowMs) break;
      // A piece without words (keypad tones) adds nothing to what was heard.
      if (piece.endMs <= nowMs) {
        if (piece.text) parts.push(piece.text);
        continue;
      }
      const share = (nowMs - piece.startMs) / Math.max(1, piece.endMs - piece.startMs);
      const cut = Math.floor(piece.text.length * share);
      const words = piece.text.slice(0, cut);
      const boundary = piece.text[cut] === ' ' || cut === piece.text.length ? words : words.slice(0, Math.max(0, words.lastIndexOf(' ')));
      if (boundary.trim()) parts.push(boundary.trim());
      break;
    }
    return parts.join(' ').trim();
  }

  /** Playback was stopped at `nowMs` (barge-in): nothing queued plays any more. */
  stop(nowMs: number): void {
    this.freeAtMs = Math.min(this.freeAtMs, nowMs);
  }

  /** A new reply: `heard` counts from here. */
  reset(): void {
    this.pieces = [];
  }
}
