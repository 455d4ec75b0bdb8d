import type { CallAudioStream } from './audio-stream';

/** Where a media node's stream endpoints hand each call's audio stream, by the key in its URL. */
export interface StreamSink {
  /** `agentId`: the call's agent as the stream's token names it (0244), when it does. */
  offer(key: string, stream: CallAudioStream, agentId?: string | null): void;
}

/** What a registry holds: a call's audio stream, or a conversation already running on one (./sessions.ts). */
export interface Claimable {
  /** Closes it: a kept one nobody claimed in time, or the node is shutting down. */
  close(): void;
  /** Its far end went away: a kept one is dropped then, worth nothing to a later claim. */
  onClose(listener: (reason: string) => void): void;
  /** Over already (a conversation the callee ended before it was claimed): kept longer, see `keepEndedMs`. */
  hasEnded?(): boolean;
}

/** How long a stream nobody has asked for yet is kept before it is closed. */
const DEFAULT_KEEP_UNCLAIMED_MS = 30_000;
/**
 * How long more one found over at that time is kept (docs/decisions/0238). Closing it hangs up
 * on nobody, and its outcome is what its call is charged for: a claim that comes late, from a
 * starved worker or media node, still gets it.
 */
const DEFAULT_KEEP_ENDED_MS = 120_000;

interface Waiter<T> {
  resolve(stream: T): void;
  reject(error: Error): void;
}

interface Kept<T> {
  stream: T;
  timer: NodeJS.Timeout;
}

/**
 * Where a call's audio stream meets the conversation that runs the call, on one media node.
 * The two arrive in either order: the provider opens the stream once the API has answered
 * with this node's URL, while the conversation may start waiting before or after that. A
 * stream that arrives first is kept for a while; one that nobody claims in time is closed,
 * which ends the call at the provider.
 *
 * Only unclaimed streams are the registry's: once handed out, a stream belongs to whoever
 * waited for it.
 */
export class StreamRegistry<T extends Claimable = CallAudioStream> {
  private readonly kept = new Map<string, Kept<T>>();
  private readonly waiters = new Map<string, Waiter<T>>();
  private readonly keepUnclaimedMs: number;
  private readonly keepEndedMs: number;

  constructor(options: { keepUnclaimedMs?: number; keepEndedMs?: number } = {}) {
    this.keepUnclaimedMs = options.keepUnclaimedMs ?? DEFAULT_KEEP_UNCLAIMED_MS;
    this.keepEndedMs = options.keepEndedMs ?? DEFAULT_KEEP_ENDED_MS;
  }

  /**
   * The call's stream: one already offered, or the next one offered. Rejects after
   * `timeoutMs`, when `signal` aborts (with its reason), or when a later `waitFor` of the
   * same call takes over (a retried attempt of the conversation is the one that counts).
   */
  waitFor(callId: string, options: { signal?: AbortSignal; timeoutMs: number }): Promise<T> {
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const kept = this.kept.get(callId);
    if (kept) {
      this.kept.delete(callId);
      clearTimeout(kept.timer);
      return Promise.resolve(kept.stream);
    }
    this.waiters.get(callId)?.reject(new Error(`another wait for the audio stream of call ${callId} took over`));
    return new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.waiters.get(callId) === waiter) this.waiters.delete(callId);
      };
      const waiter: Waiter<T> = {
        resolve: (stream) => {
          finish();
          resolve(stream);
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      };
      const timer = setTimeout(() => waiter.reject(new Error(`no audio stream for call ${callId} within ${timeoutMs} ms`)), timeoutMs);
      const onAbort = () => waiter.reject(abortReason(signal!));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(callId, waiter);
    });
  }

  /**
   * A call's stream has started: it goes to the one waiting for it, or is kept for the next
   * `waitFor`. A stream kept for the call already is replaced, and closed.
   */
  offer(callId: string, stream: T): void {
    const waiter = this.waiters.get(callId);
    if (waiter) return waiter.resolve(stream);
    this.dropKept(callId);
    const timer = setTimeout(() => this.expire(callId, stream), this.keepUnclaimedMs);
    timer.unref();
    this.kept.set(callId, { stream, timer });
    // A kept stream whose far end goes away is worth nothing to a later waiter.
    stream.onClose(() => {
      if (this.kept.get(callId)?.stream !== stream) return;
      clearTimeout(this.kept.get(callId)!.timer);
      this.kept.delete(callId);
    });
  }

  /** Whether `stream` is still kept for the call, unclaimed. */
  holds(callId: string, stream: T): boolean {
    return this.kept.get(callId)?.stream === stream;
  }

  /** Closes the call's kept stream now, if it is still `stream` (nobody will claim it). */
  drop(callId: string, stream: T): void {
    if (this.holds(callId, stream)) this.dropKept(callId);
  }

  /** Closes the kept streams and rejects every wait (the node is shutting down). */
  close(): void {
    for (const callId of [...this.kept.keys()]) this.dropKept(callId);
    for (const [callId, waiter] of [...this.waiters]) waiter.reject(new Error(`the stream registry closed while call ${callId} waited for its stream`));
  }

  /** Its keeping time is up: closed, unless it is over already, when it is kept `keepEndedMs` more. */
  private expire(callId: string, stream: T): void {
    const kept = this.kept.get(callId);
    if (kept?.stream !== stream) return;
    if (!stream.hasEnded?.()) return this.dropKept(callId);
    kept.timer = setTimeout(() => this.drop(callId, stream), this.keepEndedMs);
    kept.timer.unref();
  }

  private dropKept(callId: string): void {
    const kept = this.kept.get(callId);
    if (!kept) return;
    this.kept.delete(callId);
    clearTimeout(kept.timer);
    kept.stream.close();
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('the wait for the audio stream was aborted');
}
