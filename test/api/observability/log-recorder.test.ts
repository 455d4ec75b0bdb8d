import { expect } from 'chai';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { accessLog } from '../../../api/middleware/access-log';
import { requestId } from '../../../api/middleware/request-id';
import { LogRecorder, type ServerLogEntry } from '../../../api/observability/log-recorder';

const quiet = { info: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function entry(n: number): ServerLogEntry {
  return {
    _id: String(n),
    workspace_id: 'w',
    at: new Date(),
    source: 'api',
    method: 'GET',
    path: '/x',
    status: 200,
    duration_ms: 1,
    request_id: `r${n}`,
    credential: { kind: 'none', id: null, prefix: null, name: null },
  };
}

/** A store whose writes are seen by the test and can be held back or made to fail. */
function fakeStore() {
  const batches: string[][] = [];
  let hold: Promise<void> | null = null;
  let fail = false;
  return {
    batches,
    holdWrites(until: Promise<void>) {
      hold = until;
    },
    failWrites(value: boolean) {
      fail = value;
    },
    async insert(entries: ServerLogEntry[]) {
      if (hold) await hold;
      if (fail) throw new Error('store down');
      batches.push(entries.map((e) => e.request_id));
    },
  };
}

/**
 * The recorder that keeps server logs off the request path: a bounded buffer written in
 * batches (by size or by time), one write at a time, flushed on shutdown. No database: the
 * store is a stand-in the test controls (the API tests cover the real collection).
 */
describe('server log recorder', () => {
  it('writes a batch as soon as batchSize entries wait, the rest after the interval', async () => {
    const store = fakeStore();
    const recorder = new LogRecorder({
      insert: (e) => store.insert(e),
      ready: () => true,
      prune: async () => undefined,
      batchSize: 3,
      flushIntervalMs: 50,
      logger: quiet,
    });
    for (let i = 0; i < 4; i += 1) recorder.record(entry(i));
    await sleep(10);
    expect(store.batches).to.deep.equal([['r0', 'r1', 'r2']]);
    await sleep(100);
    expect(store.batches).to.deep.equal([['r0', 'r1', 'r2'], ['r3']]);
    expect(recorder.buffered).to.equal(0);
  });

  it('never makes the caller wait: record returns while a write hangs, and close writes the rest', async () => {
    const store = fakeStore();
    let release!: () => void;
    store.holdWrites(new Promise<void>((resolve) => (release = resolve)));
    const recorder = new LogRecorder({
      insert: (e) => store.insert(e),
      ready: () => true,
      prune: async () => undefined,
      batchSize: 2,
      flushIntervalMs: 20,
      logger: quiet,
    });
    const started = performance.now();
    for (let i = 0; i < 5; i += 1) recorder.record(entry(i));
    expect(performance.now() - started).to.be.below(20);
    await sleep(50);
    expect(store.batches).to.deep.equal([]); // the first write is still held
    release();
    await recorder.close();
    expect(store.batches.flat()).to.deep.equal(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(store.batches.every((b) => b.length <= 2)).to.equal(true);
  });

  it('keeps at most maxBuffered entries (dropping the oldest) and survives a failed write', async () => {
    const store = fakeStore();
    const errors: unknown[] = [];
    let ready = false;
    const recorder = new LogRecorder({
      insert: (e) => store.insert(e),
      ready: () => ready,
      prune: async () => undefined,
      batchSize: 100,
      flushIntervalMs: 10,
      maxBuffered: 3,
      logger: { info: () => undefined, error: (f) => errors.push(f) },
    });
    for (let i = 0; i < 5; i += 1) recorder.record(entry(i));
    await sleep(40); // no database yet: kept, not written
    expect(recorder.buffered).to.equal(3);
    expect(recorder.dropped).to.equal(2);
    store.failWrites(true);
    ready = true;
    await recorder.flush();
    expect(recorder.dropped).to.equal(5);
    expect(errors).to.have.length(1);
    store.failWrites(false);
    recorder.record(entry(9));
    await recorder.close();
    expect(store.batches).to.deep.equal([['r9']]);
  });

  it('removes entries past the retention at most once an hour', async () => {
    const cutoffs: Date[] = [];
    let now = Date.parse('2026-11-21T00:00:00Z');
    const recorder = new LogRecorder({
      insert: async () => undefined,
      ready: () => true,
      prune: async (before) => cutoffs.push(before),
      retentionMs: 86_400_000,
      logger: quiet,
      now: () => new Date(now),
    });
    recorder.record(entry(1));
    await recorder.flush();
    now += 30 * 60_000;
    recorder.record(entry(2));
    await recorder.flush();
    now += 31 * 60_000;
    recorder.record(entry(3));
    await recorder.flush();
    expect(cutoffs.map((d) => d.toISOString())).to.deep.equal(['2026-11-20T00:00:00.000Z', '2026-11-20T01:01:00.000Z']);
  });

  it('is fed by the access log once the response is sent, for API paths only', async () => {
    const recorded: ServerLogEntry[] = [];
    const recorder = { record: (e: ServerLogEntry) => recorded.push(e) } as unknown as LogRecorder;
    const app = express();
    app.use(requestId());
    app.use(accessLog(quiet, recorder));
    app.get('/api/v1/things/:id', (_req, res) => res.status(204).end());
    app.get('/elsewhere', (_req, res) => res.status(200).end());
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await fetch(`${base}/api/v1/things/1?secret=no`, { headers: { 'X-Request-ID': 'req-1', 'X-API-Key': 'vak_abcdefgh12345678' } });
      await fetch(`${base}/elsewhere`);
      await sleep(20);
    } finally {
      server.close();
    }
    expect(recorded).to.have.length(1);
    expect(recorded[0]).to.deep.include({ method: 'GET', path: '/things/1', status: 204, request_id: 'req-1', source: 'api', workspace_id: null });
    // No principal was resolved (no access step here): a presented key is not trusted or shown.
    expect(recorded[0].credential).to.deep.equal({ kind: 'none', id: null, prefix: null, name: null });
  });
});
