import type { Server } from 'node:http';
import type { StreamSink } from '../conversation/stream-registry';
import { PlivoAudioStream } from './plivo-stream';
import { attachStreamEndpoint, type StreamEndpoint } from '../conversation/stream-endpoint';

export interface TelephonyStreamsOptions {
  /** Signs the stream tokens (the API's auth secret). */
  secret: string;
  registry: StreamSink;
  /** How long an opened stream may take to send its `start` frame (default 10 s). */
  startTimeoutMs?: number;
}

export type TelephonyStreams = StreamEndpoint;

const STREAM_PATH = /^\/telephony\/streams\/([^/]+)$/;
const DEFAULT_START_TIMEOUT_MS = 10_000;

/**
 * The telephony provider's audio streams on a media node's HTTP server: the WebSocket
 * upgrades of `/telephony/streams/{call_id}?token=...`, the URL the API's answer XML gave the
 * provider. The token must be a valid stream token of that very call (else 401, no
 * WebSocket). Once the provider's `start` frame arrives the stream is offered to the
 * registry, where the call's conversation takes it.
 *
 * Upgrades of other paths are left alone for other handlers of the same server (a browser
 * call endpoint), so this must not be the only `upgrade` listener that answers them.
 */
export function attachTelephonyStreams(server: Server, options: TelephonyStreamsOptions): TelephonyStreams {
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  return attachStreamEndpoint(server, {
    path: STREAM_PATH,
    secret: options.secret,
    kind: 'telephony',
    onStream: (callId, ws, agentId) =>
      PlivoAudioStream.accept(ws, { timeoutMs: startTimeoutMs }).then(
        (stream) => options.registry.offer(callId, stream, agentId),
        // No start frame: accept has closed the socket; the provider ends the call.
        () => undefined,
      ),
  });
}
