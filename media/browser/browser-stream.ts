import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { CallAudioStream } from '../conversation/audio-stream';

/**
 * The browser call protocol: JSON text frames over one WebSocket, audio as base64 mu-law at
 * 8 kHz both ways (the engine's format, so nothing is converted on the server).
 *
 * Page -> media node:
 * - `{event: 'media', payload}`: microphone audio (20 ms frames);
 * - `{event: 'played', name}`: playback reached a `mark`;
 * - `{event: 'stop'}`: the person hung up.
 *
 * Media node -> page:
 * - `{event: 'playAudio', payload}`: agent audio, to be played back to back;
 * - `{event: 'mark', name}`: answer `played` once everything before it has played;
 * - `{event: 'clearAudio'}`: drop all queued audio at once (barge-in);
 * - `{event: 'transcript', role, text, interrupted}`: a transcript line (an interrupted
 *   assistant line replaces the full one sent before it, if any);
 * - `{event: 'ended', reason}`: the call is over; the socket closes next.
 */
export type BrowserPageFrame = { event: 'media'; payload: string } | { event: 'played'; name: string } | { event: 'stop' };
export type BrowserServerFrame =
  | { event: 'playAudio'; payload: string }
  | { event: 'mark'; name: string }
  | { event: 'clearAudio' }
  | { event: 'transcript'; role: string; text: string; interrupted: boolean }
  | { event: 'ended'; reason: string };

/** Largest playAudio frame (1 s of audio), as the telephony stream. */
const MAX_PLAY_BYTES = 8000;
/** Largest caller audio frame taken (1 s); the page sends 160 bytes every 20 ms. */
const MAX_MEDIA_BYTES = 8000;

/**
 * One browser call's audio over the page's WebSocket (see the protocol above). The socket is
 * open from the start (the token was checked on upgrade); `stop` or the socket closing is the
 * person going away. Audio that arrives before anyone listens is dropped, as on the
 * telephony stream: it is stale by the time a listener comes.
 */
export class BrowserAudioStream implements CallAudioStream {
  readonly streamId = `browser-${randomUUID()}`;
  private readonly audioListeners: ((mulaw: Buffer) => void)[] = [];
  private readonly playedListeners: ((name: string) => void)[] = [];
  private readonly closeListeners: ((reason: string) => void)[] = [];
  /** Why the far end went away, once it has; null while the stream is open. */
  private farEndGone: string | null = null;
  private closedByUs = false;

  constructor(private readonly socket: WebSocket) {
    // An error is always followed by close; the listener only keeps it from being thrown.
    socket.on('error', () => undefined);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
    socket.on('close', (code) => this.farEndWent(`the page's socket closed (${code})`));
  }

  onAudio(listener: (mulaw: Buffer) => void): void {
    this.audioListeners.push(listener);
  }

  play(mulaw: Buffer): void {
    for (let at = 0; at < mulaw.length; at += MAX_PLAY_BYTES) this.send({ event: 'playAudio', payload: mulaw.subarray(at, at + MAX_PLAY_BYTES).toString('base64') });
  }

  mark(name: string): void {
    this.send({ event: 'mark', name });
  }

  onPlayed(listener: (name: string) => void): void {
    this.playedListeners.push(listener);
  }

  clear(): void {
    this.send({ event: 'clearAudio' });
  }

  /** Transcript lines for the page; other messages are not part of the protocol and are not sent. */
  sendText(message: Record<string, unknown>): void {
    if (message.event !== 'transcript') return;
    this.send({ event: 'transcript', role: String(message.role), text: String(message.text ?? ''), interrupted: message.interrupted === true });
  }

  /** Also when the far end is already gone: the listener hears why, once, right after. */
  onClose(listener: (reason: string) => void): void {
    const reason = this.farEndGone;
    if (reason !== null && !this.closedByUs) queueMicrotask(() => listener(reason));
    else this.closeListeners.push(listener);
  }

  /** Ends the stream from our side: the page hears `ended`; `onClose` listeners are not called. */
  close(reason = 'the call is over'): void {
    if (this.closedByUs) return;
    this.closedByUs = true;
    this.closeListeners.length = 0;
    this.send({ event: 'ended', reason });
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(1000, 'call over');
  }

  private receive(text: string): void {
    const frame = parseFrame(text);
    if (!frame) return;
    switch (frame.event) {
      case 'media': {
        const audio = Buffer.from(frame.payload, 'base64');
        if (!audio.length || audio.length > MAX_MEDIA_BYTES) return;
        for (const listener of this.audioListeners) listener(audio);
        return;
      }
      case 'played':
        for (const listener of this.playedListeners) listener(frame.name);
        return;
      case 'stop':
        this.farEndWent('the caller hung up');
        if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
        return;
    }
  }

  private farEndWent(reason: string): void {
    if (this.farEndGone !== null) return;
    this.farEndGone = reason;
    if (this.closedByUs) return;
    const listeners = this.closeListeners.splice(0);
    for (const listener of listeners) listener(reason);
  }

  private send(frame: BrowserServerFrame): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }
}

/** A page frame of the protocol, or null for anything else (ignored, as a telephony stream ignores unknown events). */
function parseFrame(text: string): BrowserPageFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const frame = value as Record<string, unknown>;
  if (frame.event === 'media' && typeof frame.payload === 'string') return { event: 'media', payload: frame.payload };
  if (frame.event === 'played' && typeof frame.name === 'string') return { event: 'played', name: frame.name };
  if (frame.event === 'stop') return { event: 'stop' };
  return null;
}
