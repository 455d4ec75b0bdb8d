import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallAudioStream } from '../../media/conversation/audio-stream';
import { signStreamToken } from '../../domain/calls/stream-token';
import { openProviderEnd, startMediaNode, type MediaNode, type ProviderEnd } from '../support/stream-client';

const SECRET = 'keypad-streams-secret-at-least-32-characters';

/** The Plivo stream adapter's `dtmf` frames (the caller's keys), over a real loopback WebSocket. */
describe("telephony audio streams: the caller's keys (Plivo dtmf frames)", () => {
  let node: MediaNode;
  let seq = 0;

  before(async () => {
    node = await startMediaNode({ secret: SECRET, startTimeoutMs: 300 });
  });
  after(() => node.close());

  const started = async (): Promise<{ end: ProviderEnd; stream: CallAudioStream }> => {
    const callId = `${String(++seq).padStart(8, '0')}${'d'.repeat(24)}`;
    const waiting = node.registry.waitFor(callId, { timeoutMs: 5_000 });
    const end = await openProviderEnd(`${node.url}/telephony/streams/${callId}?token=${signStreamToken(SECRET, callId)}`);
    end.start('provider-call', 'stream-9');
    return { end, stream: await waiting };
  };

  it('hands each key of the inbound track to onDigits, in order, and ignores other tracks and malformed frames', async () => {
    const { end, stream } = await started();
    const keys: string[] = [];
    stream.onDigits!((digit) => keys.push(digit));
    const dtmf = (digit: unknown, track: unknown = 'inbound') =>
      end.send({ event: 'dtmf', sequenceNumber: ++seq, streamId: 'stream-9', dtmf: { track, digit, timestamp: '120' } });
    dtmf('1');
    dtmf('#');
    dtmf('9', 'outbound');
    dtmf('12');
    dtmf('x');
    dtmf(5);
    end.send({ event: 'dtmf', streamId: 'stream-9' });
    end.send({ event: 'dtmf', streamId: 'stream-9', dtmf: { digit: '*' } });
    dtmf('0');
    await sleep(100);
    expect(keys).to.deep.equal(['1', '#', '*', '0']);
    stream.close();
  });
});
