import WebSocket from 'ws';
import { SocketAudioStream } from '../conversation/socket-audio-stream';
import { STREAM_CONTENT_TYPE, STREAM_SAMPLE_RATE, parseStreamFrame, type AgentStreamFrame, type StreamStartFrame } from '../../contracts/telephony-stream';

/** What the provider's `start` frame says about the stream. */
export type PlivoStreamStart = StreamStartFrame['start'];

/** Plivo takes playAudio of any size; chunks of at most this keep each frame modest (1 s of audio). */
const MAX_PLAY_BYTES = 8000;

/**
 * One call's audio over Plivo's bidirectional stream (JSON text frames, mu-law at 8 kHz):
 * `media` frames are the caller's audio, `playAudio` queues ours at the provider, which
 * plays it in real time; `checkpoint` / `playedStream` mark how far playback got, and
 * `clearAudio` drops what is still queued (barge-in); `dtmf` frames are keys the caller pressed.
 * `stop` or the socket closing is the far end going away.
 *
 * Made by `accept` once the provider's `start` frame has arrived. Audio that arrives before
 * anyone listens is dropped: it is stale by the time a listener comes.
 */
export class PlivoAudioStream extends SocketAudioStream<AgentStreamFrame> {
  readonly streamId: string;
  /** The provider's id of the call (its `CallUUID`). */
  readonly providerCallId: string;
  readonly start: PlivoStreamStart;
  /**
   * Waits for the provider's `start` frame on a freshly opened socket and answers the stream;
   * rejects (and closes the socket) when the socket closes first or `timeoutMs` passes.
   */
  static accept(socket: WebSocket, options: { timeoutMs: number }): Promise<PlivoAudioStream> {
    // An error is always followed by close; the listener only keeps it from being thrown.
    socket.on('error', () => undefined);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        socket.off('message', onMessage);
        socket.off('close', onClose);
      };
      const timer = setTimeout(() => {
        done();
        socket.close(1008, 'no start frame');
        reject(new Error(`the provider sent no start frame within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
        const frame = isBinary ? null : parseStreamFrame(data.toString());
        if (frame?.event !== 'start' || !isStart(frame)) return;
        done();
        // Attached within this event: the next frame already reaches the stream.
        resolve(new PlivoAudioStream(socket, frame.start));
      };
      const onClose = (code: number) => {
        done();
        reject(new Error(`the stream closed (${code}) before its start frame`));
      };
      socket.on('message', onMessage);
      socket.on('close', onClose);
    });
  }

  private constructor(socket: WebSocket, start: PlivoStreamStart) {
    super(socket, "the stream's socket");
    this.start = start;
    this.streamId = start.streamId;
    this.providerCallId = start.callId;
  }

  play(mulaw: Buffer): void {
    for (let at = 0; at < mulaw.length; at += MAX_PLAY_BYTES) {
      const payload = mulaw.subarray(at, at + MAX_PLAY_BYTES).toString('base64');
      this.send({ event: 'playAudio', media: { contentType: STREAM_CONTENT_TYPE, sampleRate: STREAM_SAMPLE_RATE, payload } });
    }
  }

  mark(name: string): void {
    this.send({ event: 'checkpoint', streamId: this.streamId, name });
  }

  clear(): void {
    this.send({ event: 'clearAudio', streamId: this.streamId });
  }

  /** Ends the stream from our side; `onClose` listeners are not called (nobody went away). */
  close(): void {
    this.closeFromOurSide();
  }

  protected receive(text: string): void {
    const frame = parseStreamFrame(text);
    if (!frame) return;
    switch (frame.event) {
      case 'media': {
        const media = frame.media as { track?: unknown; payload?: unknown } | undefined;
        if (typeof media?.payload !== 'string' || (media.track !== undefined && media.track !== 'inbound')) return;
        this.heardAudio(Buffer.from(media.payload, 'base64'));
        return;
      }
      case 'dtmf': {
        // A key the caller pressed: {"event":"dtmf","streamId":..,"dtmf":{"track":"inbound","digit":"1","timestamp":".."}}.
        const dtmf = frame.dtmf as { track?: unknown; digit?: unknown } | undefined;
        if (typeof dtmf?.digit !== 'string' || !/^[0-9*#A-D]$/.test(dtmf.digit) || (dtmf.track !== undefined && dtmf.track !== 'inbound')) return;
        this.heardDigit(dtmf.digit);
        return;
      }
      case 'playedStream':
        if (typeof frame.name === 'string') this.heardPlayed(frame.name);
        return;
      case 'stop':
        this.farEndStopped('the provider stopped the stream (the call ended)');
        return;
      // `clearedAudio` confirms a clear() that has already taken effect for us; nothing waits for it.
    }
  }
}

function isStart(frame: Record<string, unknown>): frame is StreamStartFrame & Record<string, unknown> {
  const start = frame.start as Partial<PlivoStreamStart> | undefined;
  return typeof start === 'object' && start !== null && typeof start.streamId === 'string' && typeof start.callId === 'string';
}
