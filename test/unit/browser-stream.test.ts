import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import WebSocket from 'ws';
import { newId } from '../../db/ids';
import type { CallAudioStream } from '../../media/conversation/audio-stream';
import { StreamRegistry } from '../../media/conversation/stream-registry';
import { attachBrowserCalls, serveBrowserPage, type BrowserCalls } from '../../media/browser/server';
import { signStreamToken } from '../../domain/calls/stream-token';

const SECRET = 'browser-stream-test-secret-of-32-characters';

/** A page's end of the socket, driven by hand. */
async function openPage(url: string): Promise<{ socket: WebSocket; received: Record<string, unknown>[]; closed: Promise<number>; send(frame: unknown): void }> {
  const socket = new WebSocket(url);
  const received: Record<string, unknown>[] = [];
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  socket.on('message', (data) => received.push(JSON.parse(data.toString()) as Record<string, unknown>));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return { socket, received, closed, send: (frame) => socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame)) };
}

const eventually = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check(), what).to.equal(true);
};

/** BrowserAudioStream and the media node's browser endpoints over real loopback sockets. */
describe('browser call stream (media/browser)', () => {
  let server: Server;
  let registry: StreamRegistry;
  let calls: BrowserCalls;
  let base: string;

  beforeEach(async () => {
    registry = new StreamRegistry();
    server = createServer((req, res) => {
      if (!serveBrowserPage(req, res)) res.writeHead(404).end();
    });
    calls = attachBrowserCalls(server, { secret: SECRET, registry });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    registry.close();
    await calls.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const connect = async (callId: string) => {
    const page = await openPage(`ws://${base}/browser/calls/${callId}?token=${signStreamToken(SECRET, callId, 60, 'browser')}`);
    const stream: CallAudioStream = await registry.waitFor(callId, { timeoutMs: 2_000 });
    return { page, stream };
  };

  it('carries audio both ways, marks, clears, transcript lines; close() says ended and closes 1000', async () => {
    const { page, stream } = await connect(newId());
    const heard: Buffer[] = [];
    stream.onAudio((audio) => heard.push(audio));
    const played: string[] = [];
    stream.onPlayed((name) => played.push(name));

    page.send({ event: 'media', payload: Buffer.alloc(160, 0x7f).toString('base64') });
    page.send({ event: 'media', payload: Buffer.alloc(9000, 0x7f).toString('base64') }); // over 1 s: not a page's frame
    page.send('not json');
    page.send({ event: 'played', name: 'm1' });
    await eventually(() => heard.length === 1 && played.length === 1, 'one frame heard, one mark played');
    expect(heard[0]!.length).to.equal(160);
    expect(played).to.deep.equal(['m1']);

    stream.play(Buffer.alloc(8000 + 80, 0xff));
    stream.mark('m2');
    stream.clear();
    stream.sendText!({ event: 'transcript', role: 'assistant', text: 'Hello.', interrupted: false });
    stream.sendText!({ event: 'something-else', secret: 'not for the page' });
    stream.close();
    expect(await page.closed).to.equal(1000);
    expect(page.received.map((f) => (f.event === 'playAudio' ? ['playAudio', Buffer.from(f.payload as string, 'base64').length] : f))).to.deep.equal([
      ['playAudio', 8000],
      ['playAudio', 80],
      { event: 'mark', name: 'm2' },
      { event: 'clearAudio' },
      { event: 'transcript', role: 'assistant', text: 'Hello.', interrupted: false },
      { event: 'ended', reason: 'the call is over' },
    ]);
  });

  it("the page's stop frame, or its socket closing, is the caller hanging up (onClose once)", async () => {
    const first = await connect(newId());
    const reasons: string[] = [];
    first.stream.onClose((reason) => reasons.push(reason));
    first.page.send({ event: 'stop' });
    await first.page.closed;
    await eventually(() => reasons.length === 1, 'onClose fired');
    expect(reasons).to.deep.equal(['the caller hung up']);

    const second = await connect(newId());
    second.page.socket.close(1001);
    const reason = await new Promise<string>((resolve) => second.stream.onClose(resolve));
    expect(reason).to.match(/socket closed \(1001\)/);
  });

  it('serves the page at GET /browser only', async () => {
    const page = await fetch(`http://${base}/browser?call=x&token=y`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-security-policy')).to.include("connect-src 'self'");
    expect(await page.text()).to.match(/^<!doctype html>/);
    expect((await fetch(`http://${base}/browser/other`)).status).to.equal(404);
  });
});
