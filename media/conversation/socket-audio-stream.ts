import WebSocket from 'ws';
import type { CallAudioStream } from './audio-stream';

/**
 * What a call's audio stream over one WebSocket of JSON text frames does whatever its protocol
 * (the telephony provider's stream, the browser page's): listeners for the caller's audio,
 * playback marks and the far end going away, and closing from our side once. Each protocol
 * parses its own frames (`receive`) and writes its own (`play`, `mark`, `clear`).
 *
 * Audio that arrives before anyone listens is dropped: it is stale by the time a listener comes.
 */
export abstract class SocketAudioStream<OutFrame> implements CallAudioStream {
  abstract readonly streamId: string;
  private readonly audioListeners: ((mulaw: Buffer) => void)[] = [];
  private readonly playedListeners: ((name: string) => void)[] = [];
  private readonly digitListeners: ((digit: string) => void)[] = [];
  private readonly closeListeners: ((reason: string) => void)[] = [];
  /** Why the far end went away, once it has; null while the stream is open. */
  private farEndGone: string | null = null;
  private closedByUs = false;

  /** `socketName` says whose socket it is in the reason heard when it closes ("the page's socket"). */
  protected constructor(
    private readonly socket: WebSocket,
    socketName: string,
  ) {
    // An error is always followed by close; the listener only keeps it from being thrown.
    socket.on('error', () => undefined);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
    socket.on('close', (code) => this.farEndWent(`${socketName} closed (${code})`));
  }

  abstract play(mulaw: Buffer): void;
  abstract mark(name: string): void;
  abstract clear(): void;
  abstract close(reason?: string): void;
  /** One text frame from the far end. */
  protected abstract receive(text: string): void;

  onAudio(listener: (mulaw: Buffer) => void): void {
    this.audioListeners.push(listener);
  }

  onPlayed(listener: (name: string) => void): void {
    this.playedListeners.push(listener);
  }

  /** Keys the caller pressed; only protocols that carry them (`heardDigit`) ever call it. */
  onDigits(listener: (digit: string) => void): void {
    this.digitListeners.push(listener);
  }

  /** Also when the far end is already gone: the listener hears why, once, right after. */
  onClose(listener: (reason: string) => void): void {
    const reason = this.farEndGone;
    if (reason !== null && !this.closedByUs) queueMicrotask(() => listener(reason));
    else this.closeListeners.push(listener);
  }

  protected heardAudio(mulaw: Buffer): void {
    for (const listener of this.audioListeners) listener(mulaw);
  }

  protected heardDigit(digit: string): void {
    for (const listener of this.digitListeners) listener(digit);
  }

  protected heardPlayed(name: string): void {
    for (const listener of this.playedListeners) listener(name);
  }

  /** The far end said it is done (`stop`): it went away, and its socket is closed. */
  protected farEndStopped(reason: string): void {
    this.farEndWent(reason);
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
  }

  /** Ends the stream from our side, once: `lastFrame` (if any) goes first; `onClose` listeners are not called (nobody went away). */
  protected closeFromOurSide(lastFrame?: OutFrame): void {
    if (this.closedByUs) return;
    this.closedByUs = true;
    this.closeListeners.length = 0;
    if (lastFrame !== undefined) this.send(lastFrame);
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(1000, 'call over');
  }

  protected send(frame: OutFrame): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private farEndWent(reason: string): void {
    if (this.farEndGone !== null) return;
    this.farEndGone = reason;
    if (this.closedByUs) return;
    const listeners = this.closeListeners.splice(0);
    for (const listener of listeners) listener(reason);
  }
}
