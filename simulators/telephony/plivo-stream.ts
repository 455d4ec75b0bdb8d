/**
 * Plivo's audio stream as Plivo runs it (docs.plivo.com "Stream" XML and "Audio streaming":
 * Plivo opens a WebSocket to the `<Stream>` URL and sends JSON text frames, `start`, `media`,
 * `dtmf`, `playedStream`, `clearedAudio` and `stop`; the other side sends `playAudio`,
 * `checkpoint` and `clearAudio`). The simulator's own reading of the frames it receives;
 * the service's frames are in contracts/telephony-stream.ts.
 */

/** `audio/x-mulaw;rate=8000`, the content type the service asks for: G.711 mu-law at 8 kHz. */
export const PLIVO_STREAM_CONTENT_TYPE = 'audio/x-mulaw';
export const PLIVO_STREAM_SAMPLE_RATE = 8000;
/** Plivo sends the caller's audio in 20 ms chunks: 160 mu-law bytes. */
export const PLIVO_STREAM_FRAME_MS = 20;
export const PLIVO_STREAM_FRAME_BYTES = (PLIVO_STREAM_SAMPLE_RATE * PLIVO_STREAM_FRAME_MS) / 1000;

/** What the other side may send over the stream, as the simulator takes it; null for anything else. */
export type ReceivedStreamFrame =
  { event: 'playAudio'; contentType: string | null; payload: string } | { event: 'checkpoint'; name: string } | { event: 'clearAudio' };

export function readStreamFrame(text: string): ReceivedStreamFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const frame = value as { event?: unknown; media?: { contentType?: unknown; payload?: unknown }; name?: unknown };
  switch (frame.event) {
    case 'playAudio':
      if (typeof frame.media?.payload !== 'string') return null;
      return { event: 'playAudio', contentType: typeof frame.media.contentType === 'string' ? frame.media.contentType : null, payload: frame.media.payload };
    case 'checkpoint':
      return typeof frame.name === 'string' ? { event: 'checkpoint', name: frame.name } : null;
    case 'clearAudio':
      return { event: 'clearAudio' };
    default:
      return null;
  }
}
