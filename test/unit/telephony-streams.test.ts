import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { decodeMulaw, encodeMulaw, mulawSilence } from '../../providers/audio/mulaw';
import { SpeechDecoder, speakText } from '../../simulators/simulated-speech';
import type { CallAudioStream } from '../../media/conversation/audio-stream';
import { PlivoAudioStream } from '../../media/telephony/plivo-stream';
import { signStreamToken } from '../../domain/calls/stream-token';
import { openProviderEnd, startMediaNode, type MediaNode, type ProviderEnd } from '../support/stream-client';

const SECRET = 'streams-test-secret-at-least-32-characters';

/**
 * A media node's telephony stream endpoint and the Plivo stream adapter, against a provider end
 * driven by hand over a real loopback WebSocket (the simulated provider's side is tested with
 * the API in test/api/calls/audio-stream.test.ts).
 */
describe('telephony audio streams (Plivo frames)', () => {
  let node: MediaNode;
  let seq = 0;
  const newCallId = () => `${String(++seq).padStart(8, '0')}${'b'.repeat(24)}`;
  const streamUrl = async (callId: string, tokenFor = callId) => `${node.url}/telephony/streams/${callId}?token=${signStreamToken(SECRET, tokenFor)}`;

  before(async () => {
    node = await startMediaNode({ secret: SECRET, startTimeoutMs: 300 });
  });
  after(() => node.close());

  /** A started stream: both ends. */
  const started = async (): Promise<{ end: ProviderEnd; stream: CallAudioStream }> => {
    const callId = newCallId();
    const waiting = node.registry.waitFor(callId, { timeoutMs: 5_000 });
    const end = await openProviderEnd(await streamUrl(callId));
    end.start('provider-call', 'stream-7');
    return { end, stream: await waiting };
  };

  it('refuses an upgrade without a valid token of the very call (401), before any WebSocket exists', async () => {
    const callId = newCallId();
    const refused = async (url: string) => ((await openProviderEnd(url).catch((e: unknown) => e)) as { status?: number }).status;
    expect(await refused(`${node.url}/telephony/streams/${callId}`)).to.equal(401);
    expect(await refused(`${node.url}/telephony/streams/${callId}?token=nonsense`)).to.equal(401);
    expect(await refused(await streamUrl(callId, newCallId()))).to.equal(401);
    const otherSecret = `${node.url}/telephony/streams/${callId}?token=${signStreamToken('not-the-secret-but-also-32-characters-long', callId)}`;
    expect(await refused(otherSecret)).to.equal(401);
  });

  it('leaves upgrades of other paths to other handlers of the same server', async () => {
    const other = new WebSocket.Server({ noServer: true });
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (req.url === '/browser-calls') other.handleUpgrade(req, socket, head, (ws) => ws.send('hello from another handler'));
    };
    node.server.on('upgrade', onUpgrade);
    try {
      const client = new WebSocket(`${node.url}/browser-calls`);
      const message = await new Promise<string>((resolve, reject) => {
        client.once('message', (data) => resolve(data.toString()));
        client.once('error', reject);
      });
      expect(message).to.equal('hello from another handler');
      client.close();
    } finally {
      node.server.off('upgrade', onUpgrade);
      other.close();
    }
  });

  it('closes a stream that sends no start frame in time, and offers nothing', async () => {
    const callId = newCallId();
    const end = await openProviderEnd(await streamUrl(callId));
    end.send({
      event: 'media',
      sequenceNumber: 1,
      streamId: 's',
      media: { track: 'inbound', timestamp: '0', chunk: 1, payload: mulawSilence(20).toString('base64') },
    });
    expect(await end.closed).to.equal(1008);
    expect(await node.registry.waitFor(callId, { timeoutMs: 50 }).catch((e: Error) => e)).to.be.instanceOf(Error);
  });

  it('reads the start frame and hands the caller audio of media frames to onAudio', async () => {
    const { end, stream } = await started();
    expect(stream.streamId).to.equal('stream-7');
    expect(stream).to.be.instanceOf(PlivoAudioStream);
    expect((stream as PlivoAudioStream).providerCallId).to.equal('provider-call');
    const heard: Buffer[] = [];
    stream.onAudio((mulaw) => heard.push(mulaw));
    const audio = encodeMulaw(speakText('ok', { sampleRate: 8000 }));
    for (let at = 0, chunk = 1; at < audio.length; at += 160, chunk++) {
      end.send({
        event: 'media',
        sequenceNumber: chunk,
        streamId: 'stream-7',
        media: { track: 'inbound', timestamp: String(chunk * 20), chunk, payload: audio.subarray(at, at + 160).toString('base64') },
      });
    }
    end.send({
      event: 'media',
      sequenceNumber: 99,
      streamId: 'stream-7',
      media: { track: 'outbound', timestamp: '0', chunk: 99, payload: audio.toString('base64') },
    });
    end.send({ event: 'somethingNew' });
    await until(() => Buffer.concat(heard).length >= audio.length);
    await sleep(30);
    expect(Buffer.concat(heard).equals(audio), 'inbound audio only, byte for byte').to.equal(true);
    expect(new SpeechDecoder(8000).push(decodeMulaw(Buffer.concat([...heard, mulawSilence(100)]))).text).to.equal('ok');
    stream.close();
  });

  it('sends played audio as playAudio frames of at most 8000 bytes, marks as checkpoints and clear() as clearAudio', async () => {
    const { end, stream } = await started();
    const played: string[] = [];
    stream.onPlayed((name) => played.push(name));
    const audio = Buffer.from(Array.from({ length: 20_000 }, (_, i) => i % 256));
    stream.play(audio);
    stream.mark('after-audio');
    stream.clear();
    await until(() => end.received.length >= 5);
    const [a, b, c, checkpoint, clear] = end.received as { event: string; media?: { contentType: string; sampleRate: number; payload: string } }[];
    for (const frame of [a, b, c])
      expect(frame).to.deep.include({ event: 'playAudio' }).and.nested.include({ 'media.contentType': 'audio/x-mulaw', 'media.sampleRate': 8000 });
    const sizes = [a, b, c].map((f) => Buffer.from(f!.media!.payload, 'base64').length);
    expect(sizes).to.deep.equal([8000, 8000, 4000]);
    expect(Buffer.concat([a, b, c].map((f) => Buffer.from(f!.media!.payload, 'base64'))).equals(audio)).to.equal(true);
    expect(checkpoint).to.deep.equal({ event: 'checkpoint', streamId: 'stream-7', name: 'after-audio' });
    expect(clear).to.deep.equal({ event: 'clearAudio', streamId: 'stream-7' });

    end.send({ event: 'clearedAudio', streamId: 'stream-7' });
    end.send({ event: 'playedStream', streamId: 'stream-7', name: 'later-mark' });
    await until(() => played.length > 0);
    expect(played).to.deep.equal(['later-mark']);
    stream.close();
    expect(await end.closed).to.equal(1000);
  });

  it('fires onClose once when the provider sends stop, also for a listener that comes late; close() is quiet', async () => {
    const { end, stream } = await started();
    const reasons: string[] = [];
    stream.onClose((reason) => reasons.push(reason));
    end.send({ event: 'stop', sequenceNumber: 5 });
    expect(await end.closed).to.equal(1000);
    await until(() => reasons.length > 0);
    const late = await new Promise<string>((resolve) => stream.onClose(resolve));
    expect(reasons).to.deep.equal(['the provider stopped the stream (the call ended)']);
    expect(late).to.equal(reasons[0]);

    const other = await started();
    const quiet: string[] = [];
    other.stream.onClose((reason) => quiet.push(reason));
    other.stream.close();
    expect(await other.end.closed).to.equal(1000);
    // Sending after close is dropped, not thrown.
    other.stream.play(mulawSilence(20));
    await sleep(30);
    expect(quiet).to.deep.equal([]);
  });

  it('fires onClose when the socket drops without a stop', async () => {
    const { end, stream } = await started();
    const reason = new Promise<string>((resolve) => stream.onClose(resolve));
    end.socket.terminate();
    expect(await reason).to.match(/socket closed \(1006\)/);
  });
});

async function until(done: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await sleep(5);
  }
}
