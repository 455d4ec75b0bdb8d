import WebSocket from 'ws';
import { decodeMulaw, encodeMulaw, MULAW_SILENCE } from '../../providers/audio/mulaw';
import { SpeechDecoder, speakText } from '../../simulators/simulated-speech';

const FRAME_MS = 20;
const FRAME_BYTES = 160;

export type ServerFrame = Record<string, unknown> & { event: string };

/**
 * The browser page's part of a browser call, played in Node: opens the call's WebSocket, sends
 * a 20 ms `media` frame of mu-law every 20 ms of real time (silence, or a line of simulated
 * speech), and takes the agent's audio as the page does: decoded (the simulated speech read
 * back into text) and "played" on a clock, so that tests can wait for the agent to finish.
 */
export class BrowserCallClient {
  /** Every frame the media node sent, in order. */
  readonly received: ServerFrame[] = [];
  /** Everything the agent said, decoded from its audio. */
  heard = '';
  sentFrames = 0;
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly decoder = new SpeechDecoder(8000);
  private readonly speech: Buffer[] = [];
  private ticker: NodeJS.Timeout | null = null;
  private startedAtMs = 0;
  private playheadMs = 0;
  private receivedAudioBytes = 0;
  /** Agent audio received when the last line of ours ended (0: the welcome is awaited). */
  private audioBytesAtLineEnd = 0;

  private constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('message', (data) => this.receive(JSON.parse(data.toString()) as ServerFrame));
    socket.once('close', () => this.stopTicking());
    this.startedAtMs = Date.now();
    this.ticker = setInterval(() => this.tick(), FRAME_MS);
  }

  /** Connects; rejects with `status` set when the upgrade is refused. */
  static connect(url: string): Promise<BrowserCallClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('unexpected-response', (_req, res) => {
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
        socket.terminate();
      });
      socket.once('error', reject);
      socket.once('open', () => resolve(new BrowserCallClient(socket)));
    });
  }

  /** Says a line (simulated speech at 8 kHz); resolves when its last frame went out. */
  async say(text: string): Promise<void> {
    this.speech.push(encodeMulaw(speakText(text, { sampleRate: 8000 })));
    while (this.speech.length && this.socket.readyState === WebSocket.OPEN) await sleep(FRAME_MS);
    this.audioBytesAtLineEnd = this.receivedAudioBytes;
  }

  /**
   * Resolves once the agent has said something since our last line (since the start: the
   * welcome) and then been quiet, nothing left to play, for `quietMs`.
   */
  async untilAgentQuiet(quietMs = 400, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const before = this.audioBytesAtLineEnd;
    while (Date.now() < deadline) {
      if (this.receivedAudioBytes > before && Date.now() >= this.playheadMs + quietMs) return;
      await sleep(50);
    }
    throw new Error(`the agent did not speak and fall quiet within ${timeoutMs} ms (heard so far: "${this.heard}")`);
  }

  /** Resolves with the first received frame that matches. */
  async frame(match: (frame: ServerFrame) => boolean, timeoutMs = 20_000): Promise<ServerFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(
          `no matching frame within ${timeoutMs} ms; received: ${JSON.stringify(this.received.map((f) => (f.event === 'playAudio' ? 'playAudio' : f)))}`,
        );
      await sleep(20);
    }
  }

  transcript(): { role: string; text: string; interrupted: boolean }[] {
    return this.received
      .filter((f) => f.event === 'transcript')
      .map((f) => ({ role: f.role as string, text: f.text as string, interrupted: f.interrupted as boolean }));
  }

  /** Hangs up as the page's button does: `stop`, then the socket closes. */
  async hangUp(): Promise<void> {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ event: 'stop' }));
    this.socket.close(1000);
    await this.closed;
  }

  /** Goes away without a word, as a closed tab does. */
  async disconnect(): Promise<void> {
    this.socket.close(1001);
    await this.closed;
  }

  private receive(frame: ServerFrame): void {
    this.received.push(frame);
    if (frame.event === 'playAudio') {
      const audio = Buffer.from(frame.payload as string, 'base64');
      this.receivedAudioBytes += audio.length;
      this.heard += this.decoder.push(decodeMulaw(audio)).text;
      this.playheadMs = Math.max(Date.now(), this.playheadMs) + audio.length / 8;
    } else if (frame.event === 'clearAudio') {
      this.playheadMs = Date.now();
    } else if (frame.event === 'mark') {
      // Answered when playback gets there, as the page does.
      const name = frame.name as string;
      setTimeout(() => this.send({ event: 'played', name }), Math.max(0, this.playheadMs - Date.now())).unref();
    }
  }

  /** Sends the frames due by now (a late timer catches up). */
  private tick(): void {
    const due = Math.floor((Date.now() - this.startedAtMs) / FRAME_MS) + 1;
    while (this.sentFrames < due && this.socket.readyState === WebSocket.OPEN) {
      this.send({ event: 'media', payload: this.nextFrame().toString('base64') });
      this.sentFrames++;
    }
  }

  private nextFrame(): Buffer {
    const frame = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE);
    let filled = 0;
    while (filled < FRAME_BYTES && this.speech.length) {
      const line = this.speech[0]!;
      const taken = line.copy(frame, filled, 0, FRAME_BYTES - filled);
      filled += taken;
      if (taken === line.length) this.speech.shift();
      else this.speech[0] = line.subarray(taken);
    }
    return frame;
  }

  private send(frame: Record<string, unknown>): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private stopTicking(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
