/**
 * Plivo's bidirectional audio stream, as JSON text frames over a WebSocket that the provider
 * opens to the URL of the answer XML's `<Stream>`. Audio is mu-law at 8 kHz, base64 in the
 * frames, both ways. These are the frames' shapes; each side parses what it receives itself.
 */

export const STREAM_CONTENT_TYPE = 'audio/x-mulaw';
export const STREAM_SAMPLE_RATE = 8000;
/** The provider sends the caller's audio in 20 ms frames: 160 mu-law bytes. */
export const STREAM_FRAME_MS = 20;
export const STREAM_FRAME_BYTES = (STREAM_SAMPLE_RATE * STREAM_FRAME_MS) / 1000;

// ---- provider -> us ----

export interface StreamStartFrame {
  event: 'start';
  sequenceNumber: number;
  start: {
    callId: string;
    streamId: string;
    accountId: string;
    tracks: string[];
    mediaFormat: { encoding: string; sampleRate: number };
  };
}

export interface StreamMediaFrame {
  event: 'media';
  sequenceNumber: number;
  streamId: string;
  media: {
    track: string;
    /** Milliseconds since the stream started, as a string. */
    timestamp: string;
    chunk: number;
    /** Base64 mu-law. */
    payload: string;
  };
}

/** Playback reached a checkpoint we sent. */
export interface StreamPlayedFrame {
  event: 'playedStream';
  sequenceNumber?: number;
  streamId: string;
  name: string;
}

/** Queued audio was dropped after our `clearAudio`. */
export interface StreamClearedFrame {
  event: 'clearedAudio';
  sequenceNumber?: number;
  streamId: string;
}

/** A key the caller pressed (the provider recognised its tone, or took it out of band). */
export interface StreamDtmfFrame {
  event: 'dtmf';
  sequenceNumber?: number;
  streamId: string;
  dtmf: {
    track: string;
    /** One of `0-9`, `*`, `#`, `A-D`. */
    digit: string;
    /** Milliseconds since the stream started, as a string. */
    timestamp: string;
  };
}

/** The call ended; the provider closes the socket next. */
export interface StreamStopFrame {
  event: 'stop';
  sequenceNumber?: number;
}

export type ProviderStreamFrame = StreamStartFrame | StreamMediaFrame | StreamPlayedFrame | StreamClearedFrame | StreamDtmfFrame | StreamStopFrame;

// ---- us -> provider ----

export interface PlayAudioFrame {
  event: 'playAudio';
  media: { contentType: string; sampleRate: number; payload: string };
}

export interface ClearAudioFrame {
  event: 'clearAudio';
  streamId: string;
}

export interface CheckpointFrame {
  event: 'checkpoint';
  streamId: string;
  name: string;
}

export type AgentStreamFrame = PlayAudioFrame | ClearAudioFrame | CheckpointFrame;

/** A text frame's JSON object with a string `event`, or null. */
export function parseStreamFrame(text: string): ({ event: string } & Record<string, unknown>) | null {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const frame = value as Record<string, unknown>;
    return typeof frame.event === 'string' ? (frame as { event: string } & Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
