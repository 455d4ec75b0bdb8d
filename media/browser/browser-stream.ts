import { randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { SocketAudioStream } from '../conversation/socket-audio-stream';

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
export class BrowserAudioStream extends SocketAudioStream<BrowserServerFrame> {
  readonly streamId = `browser-${randomUUID()}`;

  constructor(socket: WebSocket) {
    super(socket, "the page's socket");
  }

  play(mulaw: Buffer): void {
    for (let at = 0; at < mulaw.length; at += MAX_PLAY_BYTES)
      this.send({ event: 'playAudio', payload: mulaw.subarray(at, at + MAX_PLAY_BYTES).toString('base64') });
  }

  mark(name: string): void {
    this.send({ event: 'mark', name });
  }

  clear(): void {
    this.send({ event: 'clearAudio' });
  }

  /** Transcript lines for the page; other messages are not part of the protocol and are not sent. */
  sendText(message: Record<string, unknown>): void {
    if (message.event !== 'transcript') return;
    this.send({ event: 'transcript', role: String(message.role), text: String(message.text ?? ''), interrupted: message.interrupted === true });
  }

  /** Ends the stream from our side: the page hears `ended`; `onClose` listeners are not called. */
  close(reason = 'the call is over'): void {
    this.closeFromOurSide({ event: 'ended', reason });
  }

  protected receive(text: string): void {
    const frame = parseFrame(text);
    if (!frame) return;
    switch (frame.event) {
      case 'media': {
        const audio = Buffer.from(frame.payload, 'base64');
        if (!audio.length || audio.length > MAX_MEDIA_BYTES) return;
        this.heardAudio(audio);
        return;
      }
      case 'played':
        this.heardPlayed(frame.name);
        return;
      case 'stop':
        this.farEndStopped('the caller hung up');
        return;
    }
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
