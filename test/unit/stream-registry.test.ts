import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { StreamRegistry } from '../../media/conversation/stream-registry';
import { signStreamToken } from '../../domain/calls/stream-token';
import { openProviderEnd, startMediaNode, type MediaNode, type ProviderEnd } from '../support/stream-client';

const SECRET = 'registry-test-secret-at-least-32-characters';

/**
 * Where a call's audio stream meets its conversation, with real streams: the provider's end
 * opens a WebSocket to a media node's stream endpoint and sends `start`; the node offers the
 * stream to the registry.
 */
describe('StreamRegistry', () => {
  let node: MediaNode;
  let registry: StreamRegistry;
  let seq = 0;
  const newCallId = () => `${String(++seq).padStart(8, '0')}${'a'.repeat(24)}`;

  beforeEach(async () => {
    registry = new StreamRegistry({ keepUnclaimedMs: 300 });
    node = await startMediaNode({ secret: SECRET, registry });
  });
  afterEach(() => node.close());

  /** A provider end of `callId` that has sent its start frame. */
  const connect = async (callId: string, streamId = `stream-${callId}`): Promise<ProviderEnd> => {
    const end = await openProviderEnd(`${node.url}/telephony/streams/${callId}?token=${signStreamToken(SECRET, callId)}`);
    end.start(`provider-${callId}`, streamId);
    return end;
  };

  it('hands a stream to the one already waiting for its call, and leaves it open past the keeping time', async () => {
    const callId = newCallId();
    const waiting = registry.waitFor(callId, { timeoutMs: 5_000 });
    const end = await connect(callId, 'stream-x');
    const stream = await waiting;
    expect(stream.streamId).to.equal('stream-x');
    await sleep(400);
    expect(end.socket.readyState).to.equal(WebSocket.OPEN);
  });

  it('keeps a stream offered before anyone waits, for the next waitFor of its call only', async () => {
    const [callId, other] = [newCallId(), newCallId()];
    await connect(callId, 'early');
    await sleep(50);
    const stray = await registry.waitFor(other, { timeoutMs: 100 }).catch((e: Error) => e);
    expect(stray)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.matches(/no audio stream for call .* within 100 ms/);
    expect((await registry.waitFor(callId, { timeoutMs: 100 })).streamId).to.equal('early');
    // Taken: the next wait for the same call finds nothing.
    expect(await registry.waitFor(callId, { timeoutMs: 50 }).catch((e: Error) => e)).to.be.instanceOf(Error);
  });

  it('closes a stream nobody claims in time (the provider then ends the call)', async () => {
    const callId = newCallId();
    const end = await connect(callId);
    expect(await end.closed).to.equal(1000);
    expect(await registry.waitFor(callId, { timeoutMs: 50 }).catch((e: Error) => e)).to.be.instanceOf(Error);
  });

  it('replaces a kept stream with a newer one of the same call, and closes the old one', async () => {
    const callId = newCallId();
    const first = await connect(callId, 'first');
    await sleep(50);
    await connect(callId, 'second');
    expect(await first.closed).to.equal(1000);
    expect((await registry.waitFor(callId, { timeoutMs: 100 })).streamId).to.equal('second');
  });

  it('forgets a kept stream whose far end went away', async () => {
    const callId = newCallId();
    const end = await connect(callId);
    await sleep(50);
    end.socket.close();
    await end.closed;
    await sleep(20);
    expect(await registry.waitFor(callId, { timeoutMs: 50 }).catch((e: Error) => e)).to.be.instanceOf(Error);
  });

  it('stops waiting on abort (with its reason), and when a later wait of the same call takes over', async () => {
    const callId = newCallId();
    const controller = new AbortController();
    const aborted = registry.waitFor(callId, { timeoutMs: 5_000, signal: controller.signal }).catch((e: Error) => e);
    controller.abort(new Error('activity cancelled'));
    expect(await aborted).to.have.property('message', 'activity cancelled');
    expect(await registry.waitFor(callId, { timeoutMs: 5_000, signal: AbortSignal.abort(new Error('already')) }).catch((e: Error) => e)).to.have.property(
      'message',
      'already',
    );

    const earlier = registry.waitFor(callId, { timeoutMs: 5_000 }).catch((e: Error) => e);
    const later = registry.waitFor(callId, { timeoutMs: 5_000 });
    expect(await earlier)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.matches(/took over/);
    await connect(callId, 'for-the-later');
    expect((await later).streamId).to.equal('for-the-later');
  });

  it('close() closes kept streams and ends every wait', async () => {
    const [kept, awaited] = [newCallId(), newCallId()];
    const end = await connect(kept);
    const waiting = registry.waitFor(awaited, { timeoutMs: 5_000 }).catch((e: Error) => e);
    await sleep(50);
    registry.close();
    expect(await waiting)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.matches(/registry closed/);
    expect(await end.closed).to.equal(1000);
  });

  /** A kept conversation as the media node keeps one (./session.ts): over or still talking. */
  class Kept {
    closed = false;
    constructor(private readonly over: boolean) {}
    close(): void {
      this.closed = true;
    }
    onClose(): void {}
    hasEnded(): boolean {
      return this.over;
    }
  }

  it('keeps a conversation found over at its keeping time longer, for a late claim, and closes one still talking (0238; timing: 100 ms and 300 ms keeps)', async () => {
    const sessions = new StreamRegistry<Kept>({ keepUnclaimedMs: 100, keepEndedMs: 300 });
    const [over, talking, neverClaimed] = [new Kept(true), new Kept(false), new Kept(true)];
    sessions.offer('over', over);
    sessions.offer('talking', talking);
    sessions.offer('never-claimed', neverClaimed);
    await sleep(200);
    expect(talking.closed, 'a conversation still talking is closed at its keeping time').to.equal(true);
    expect(over.closed, 'one over is kept for its claim').to.equal(false);
    expect(await sessions.waitFor('over', { timeoutMs: 50 })).to.equal(over);
    await sleep(300);
    expect(neverClaimed.closed, 'one over and never claimed is closed after the longer keep').to.equal(true);
    expect(over.closed, "a claimed one is its claimant's").to.equal(false);
  });
});
