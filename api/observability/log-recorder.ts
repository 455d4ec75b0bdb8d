import mongoose from 'mongoose';
import { ServerLog, type ServerLogDocument } from '../../db/models/server-log';
import { jsonLogger, type Logger } from '../../domain/shared/logger';

export type ServerLogEntry = ServerLogDocument;

export interface LogRecorderOptions {
  /** Writes one batch (the server_logs collection by default). */
  insert?: (entries: ServerLogEntry[]) => Promise<unknown>;
  /** Whether the store can take writes now (default: mongoose is connected). */
  ready?: () => boolean;
  /** Removes entries older than the cutoff (default: from server_logs). */
  prune?: (before: Date) => Promise<unknown>;
  flushIntervalMs?: number;
  batchSize?: number;
  /** Entries held at most; past it the oldest are dropped (counted in `dropped`). */
  maxBuffered?: number;
  retentionMs?: number;
  logger?: Logger;
  now?: () => Date;
}

const HOUR_MS = 60 * 60 * 1000;

/**
 * Keeps request logs off the request path: `record` only appends to a bounded buffer; a batch
 * is written every `flushIntervalMs` or as soon as `batchSize` entries wait, one write at a
 * time. A failed write is reported and its batch dropped (logs must never hold up or take down
 * the API); `close` writes what is left, for a clean shutdown. About once an hour, entries past
 * the retention are removed, so that the collection (read by scanning on FerretDB) stays small.
 */
export class LogRecorder {
  private buffer: ServerLogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private lastPruneAt = 0;
  /** Entries dropped because the buffer was full or their write failed. */
  dropped = 0;

  private readonly insert: (entries: ServerLogEntry[]) => Promise<unknown>;
  private readonly ready: () => boolean;
  private readonly prune: (before: Date) => Promise<unknown>;
  private readonly flushIntervalMs: number;
  private readonly batchSize: number;
  private readonly maxBuffered: number;
  private readonly retentionMs: number;
  private readonly logger: Logger;
  private readonly now: () => Date;

  constructor(options: LogRecorderOptions = {}) {
    this.insert = options.insert ?? ((entries) => ServerLog.insertMany(entries, { ordered: false, lean: true }));
    this.ready = options.ready ?? (() => mongoose.connection.readyState === 1);
    this.prune = options.prune ?? ((before) => ServerLog.deleteMany({ at: { $lt: before } }));
    this.flushIntervalMs = options.flushIntervalMs ?? 500;
    this.batchSize = options.batchSize ?? 200;
    this.maxBuffered = options.maxBuffered ?? 20_000;
    this.retentionMs = options.retentionMs ?? 14 * 24 * HOUR_MS;
    this.logger = options.logger ?? jsonLogger();
    this.now = options.now ?? (() => new Date());
  }

  get buffered(): number {
    return this.buffer.length;
  }

  record(entry: ServerLogEntry): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.buffer.shift();
      this.dropped += 1;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= this.batchSize) this.schedule(0);
    else this.schedule(this.flushIntervalMs);
  }

  /** Writes everything buffered now (and waits for a write already under way). */
  async flush(): Promise<void> {
    this.clearTimer();
    for (;;) {
      if (this.writing) await this.writing;
      else if (this.buffer.length && this.ready()) await this.writeBatch();
      else return;
    }
  }

  /** Shutdown: the last entries written, no timer left. */
  async close(): Promise<void> {
    await this.flush();
    this.clearTimer();
  }

  private schedule(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.drain();
    }, delayMs);
    // A pending batch never keeps a process alive: shutdown calls close() to write it.
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async drain(): Promise<void> {
    if (this.writing) return; // the running write reschedules when it is done
    if (!this.ready()) {
      // No database yet (or any more): keep the entries, try again later.
      if (this.buffer.length) this.schedule(this.flushIntervalMs);
      return;
    }
    await this.writeBatch();
    if (this.buffer.length) this.schedule(this.buffer.length >= this.batchSize ? 0 : this.flushIntervalMs);
  }

  private writeBatch(): Promise<void> {
    const batch = this.buffer.splice(0, this.batchSize);
    const write = (async () => {
      try {
        await this.insert(batch);
      } catch (error) {
        this.dropped += batch.length;
        this.logger.error({ msg: 'server logs not written', entries: batch.length, error: String(error) });
      }
      // Beside the writes, not before the next one: a prune scans the collection.
      this.pruneNowAndThen();
    })();
    this.writing = write.finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  private pruneNowAndThen(): void {
    const now = this.now().getTime();
    if (now - this.lastPruneAt < HOUR_MS) return;
    this.lastPruneAt = now;
    this.prune(new Date(now - this.retentionMs)).catch((error: unknown) => {
      this.logger.error({ msg: 'old server logs not removed', error: String(error) });
    });
  }
}

/** The process's recorder: the access log feeds it, the server closes it on shutdown. */
export const serverLogRecorder = new LogRecorder();
