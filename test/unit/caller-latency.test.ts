import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { encodeUlaw } from '../../simulators/g711';
import { speakText } from '../../simulators/simulated-speech';
import { SimulatedCaller, type StreamedConversation } from '../../simulators/telephony/simulated-caller';
import { callerLatency, nearestRank } from '../support/caller-latency';
import { until } from '../support/until';

/** Frames (20 ms) of the caller's audio holding sound: a byte that is not mu-law silence (0xff, 0x7f). */
const voiced = (payload: Buffer) => payload.some((byte) => byte !== 0xff && byte !== 0x7f);

/**
 * The caller-latency benchmark's measure (issue 32), checked against a far end whose timing is
 * known: a stand-in agent that answers each of the callee's lines exactly REPLY_MS after the
 * line's last sound reached it. The simulated callee, with its telephony legs delayed, must
 * measure that plus both legs, within its playback's 20 ms frames.
 */
describe('caller latency measured by the simulated callee', function () {
  this.timeout(20_000);
  const REPLY_MS = 250;
  const LEG_MS = 60;
  /** A stream frame's audio. */
  const FRAME_MS = 20;

  it('measures voice-to-voice from the last sample said to the first sample heard, legs included', async () => {
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
    const answer = Buffer.from(encodeUlaw(speakText('ok', { sampleRate: 8000 })));
    server.on('connection', (socket: WebSocket) => {
      let speaking = false;
      let timer: NodeJS.Timeout | null = null;
      socket.send(JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: answer.toString('base64') } }));
      socket.on('message', (data) => {
        const frame = JSON.parse(data.toString()) as { event: string; media?: { payload: string } };
        if (frame.event !== 'media') return;
        const sound = voiced(Buffer.from(frame.media!.payload, 'base64'));
        if (sound) {
          speaking = true;
          if (timer) clearTimeout(timer);
          timer = null;
          return;
        }
        if (!speaking) return;
        // The first silent frame after speech: a frame leaves the callee once its 20 ms were
        // spoken, so this one left a frame after the line's last sample ended (a leg ago).
        speaking = false;
        timer = setTimeout(
          () =>
            socket.send(JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: answer.toString('base64') } })),
          REPLY_MS - FRAME_MS,
        );
      });
    });
    const record: StreamedConversation = {
      streamConnected: false,
      streamConnectedAt: null,
      heard: [],
      said: [],
      clearedAudio: 0,
      digitsHeard: '',
      digitsPressed: '',
      beepedAt: null,
    };
    const caller = new SimulatedCaller({
      url,
      providerCallId: 'call-1',
      accountId: 'account',
      steps: [
        { say: 'first line', afterAgentSilenceMs: 300 },
        { say: 'second line', afterAgentSilenceMs: 300 },
      ],
      record,
      onHangUp: () => undefined,
      onStreamEnded: () => undefined,
      legDelayMs: LEG_MS,
    });
    try {
      await until(
        async () => record.heard.length,
        (n) => n >= 3,
        15_000,
        50,
      );
    } finally {
      await caller.stop();
      server.close();
    }
    const answeredAt = new Date(record.streamConnectedAt!.getTime() - 100);
    const measured = callerLatency({ history: [{ status: 'in-progress', at: answeredAt }], heard: record.heard, said: record.said });
    expect(measured.voiceToVoiceMs).to.have.length(2);
    for (const ms of measured.voiceToVoiceMs) {
      // Both legs and the reply, plus at most a frame of the far end's detection and a frame of playback.
      expect(ms).to.be.at.least(REPLY_MS + 2 * LEG_MS - 5);
      expect(ms).to.be.at.most(REPLY_MS + 2 * LEG_MS + 45);
    }
    // The welcome, sent as the stream opened, is heard a leg after the answer's 100 ms and the stream's opening.
    expect(measured.greetingMs).to.be.within(100 + LEG_MS - 5, 100 + LEG_MS + 45);
  });

  it('pairs each line with the first utterance after it, and leaves out lines nobody answered before the next', () => {
    const at = (ms: number) => new Date(1_000_000 + ms);
    const measured = callerLatency({
      history: [
        { status: 'ringing', at: at(-3000) },
        { status: 'in-progress', at: at(-1000) },
      ],
      heard: [
        { text: 'welcome', at: at(-600) },
        { text: 'answer one', at: at(1700) },
        { text: 'answer three', at: at(6400) },
      ],
      said: [
        { text: 'one', at: at(0), endedAt: at(1000) },
        // Unanswered: the callee went on before the agent said anything.
        { text: 'two', at: at(3000), endedAt: at(4000) },
        { text: 'three', at: at(4500), endedAt: at(5600) },
        // Still being said when the call ended.
        { text: 'four', at: at(7000), endedAt: null },
      ],
    });
    expect(measured.voiceToVoiceMs).to.deep.equal([700, 800]);
    expect(measured.greetingMs).to.equal(400);
    expect(nearestRank([5, 1, 4, 2, 3], 50)).to.equal(3);
    expect(nearestRank([5, 1, 4, 2, 3], 90)).to.equal(5);
  });
});
