import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { BlockedAddressError, checkedAddresses, pinnedLookup, type CheckedAddress, type Resolver } from './ssrf-guard';

/**
 * One outgoing HTTP request to a URL a customer gave us (an agent's HTTP tool, a webhook
 * endpoint). It never throws for anything the target or the network does:
 * - the host must pass the SSRF guard, and the request connects to the checked addresses only;
 * - redirects are never followed (following one would connect to an unchecked target);
 * - `timeoutMs` bounds everything: name resolution, connecting, and the answer's body;
 * - at most `bodyLimitBytes` of the answer are read; the rest is never downloaded.
 */

export interface GuardedRequest {
  method: string;
  url: URL;
  headers: OutgoingHttpHeaders;
  body: string | null;
  timeoutMs: number;
  bodyLimitBytes: number;
  /** The caller no longer wants the answer (a tool's reply the caller talked over): the request stops at once. */
  signal?: AbortSignal;
  /**
   * Reuse connections (webhooks): a keep-alive pool per target and checked address set, so a
   * pooled socket is always one connected to addresses that passed the guard for this request.
   */
  keepAlive?: boolean;
}

export interface GuardOptions {
  /** Let requests reach private, loopback and link-local addresses. */
  allowPrivateNetworks: boolean;
  /** Name resolution (default: the system's); tests give their own. */
  resolve?: Resolver;
}

export interface GuardedResponse {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body was longer than `bodyLimitBytes`. */
  cut: boolean;
}

export type RequestFailureKind = 'blocked_address' | 'dns' | 'refused' | 'timeout' | 'network' | 'canceled';

export interface RequestFailure {
  kind: RequestFailureKind;
  message: string;
}

export type GuardedOutcome = { response: GuardedResponse; failure: null } | { response: null; failure: RequestFailure };

const DNS_FAILURE_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA']);

export async function sendGuarded(request: GuardedRequest, options: GuardOptions): Promise<GuardedOutcome> {
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const stop = request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
  try {
    const addresses = await untilAborted(checkedAddresses(request.url.hostname, options), stop);
    const response = await send(request, addresses, stop);
    const body = await readBody(response, request.bodyLimitBytes);
    return {
      response: { status: response.statusCode ?? 0, statusMessage: response.statusMessage ?? '', headers: response.headers, text: body.text, cut: body.cut },
      failure: null,
    };
  } catch (error) {
    const failure = request.signal?.aborted
      ? { kind: 'canceled' as const, message: 'canceled before the answer was complete' }
      : deadline.aborted
        ? { kind: 'timeout' as const, message: `no complete answer within ${formatSeconds(request.timeoutMs)} s` }
        : failureOf(error, request.url);
    return { response: null, failure };
  }
}

export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

async function send(request: GuardedRequest, addresses: CheckedAddress[], signal: AbortSignal): Promise<IncomingMessage> {
  const agent = request.keepAlive ? pooledAgent(request.url, addresses) : false;
  try {
    return await sendOnce(request, addresses, agent, signal);
  } catch (error) {
    // A pooled socket the target closed as we reused it: once more on a fresh connection.
    // The request never reached the target's application (it was reset before any answer).
    if (!(error as { reusedSocket?: boolean }).reusedSocket || (error as NodeJS.ErrnoException).code !== 'ECONNRESET' || signal.aborted) throw error;
    return sendOnce(request, addresses, agent, signal);
  }
}

function sendOnce(
  { url, method, headers, body }: GuardedRequest,
  addresses: CheckedAddress[],
  agent: http.Agent | false,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // agent: false - no pooled keep-alive socket, so every request connects through its own pinned lookup.
    const outgoing = (url.protocol === 'https:' ? https : http).request(url, { method, headers, lookup: pinnedLookup(addresses), signal, agent }, resolve);
    outgoing.on('error', (error) => reject(Object.assign(error, { reusedSocket: outgoing.reusedSocket })));
    outgoing.end(body ?? undefined);
  });
}

/** Idle pooled connections close after this (below the 5 s keep-alive of Node's and many servers). */
const POOL_IDLE_MS = 4_000;
/** Pools kept at most; the least recently used one is closed beyond that. */
const MAX_POOLS = 500;
const pools = new Map<string, http.Agent>();

/**
 * The keep-alive pool of one target (scheme, host, port) and one set of checked addresses. The
 * addresses are part of the key: a request whose name now resolves elsewhere gets another
 * pool, and a request the guard refused never reaches here, so no pooled socket ever serves
 * an address that this request's check did not pass.
 */
function pooledAgent(url: URL, addresses: CheckedAddress[]): http.Agent {
  const key = `${url.protocol}//${url.host}|${addresses
    .map((a) => a.address)
    .sort()
    .join(',')}`;
  let agent = pools.get(key);
  if (agent) {
    pools.delete(key);
  } else {
    const options = { keepAlive: true, timeout: POOL_IDLE_MS, maxFreeSockets: 64, scheduling: 'lifo' as const };
    agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    if (pools.size >= MAX_POOLS) {
      const [oldestKey, oldest] = pools.entries().next().value as [string, http.Agent];
      pools.delete(oldestKey);
      oldest.destroy();
    }
  }
  pools.set(key, agent);
  return agent;
}

/** The number of keep-alive pools (one per target and checked address set), for tests. */
export function connectionPoolCount(): number {
  return pools.size;
}

/** Closes every pooled connection (tests, shutdown). */
export function closeConnectionPools(): void {
  for (const agent of pools.values()) agent.destroy();
  pools.clear();
}

/** The body as text, reading at most `limit` bytes. */
async function readBody(response: IncomingMessage, limit: number): Promise<{ text: string; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) {
      cut = true;
      break; // ends the iteration and destroys the response: the rest is never downloaded
    }
  }
  const bytes = Buffer.concat(chunks).subarray(0, limit);
  return { text: decode(bytes, response.headers['content-type']), cut };
}

/** The body as text in the charset its Content-Type names (UTF-8 when none, or an unknown one). */
function decode(bytes: Buffer, contentType: string | undefined): string {
  const charset = /charset="?([^";\s]+)/i.exec(contentType ?? '')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function formatSeconds(ms: number): string {
  return Number.isInteger(ms / 1000) ? String(ms / 1000) : (ms / 1000).toFixed(1);
}

function failureOf(error: unknown, url: URL): RequestFailure {
  if (error instanceof BlockedAddressError) return { kind: 'blocked_address', message: error.message };
  const codes = errorCodes(error);
  if (codes.length > 0 && codes.every((code) => DNS_FAILURE_CODES.has(code))) {
    return { kind: 'dns', message: `could not resolve ${url.hostname} (${codes[0]})` };
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (codes.length > 0 && codes.every((code) => code === 'ECONNREFUSED')) {
    return { kind: 'refused', message: `${url.hostname}:${port} refused the connection (nothing listens there)` };
  }
  const reason = error instanceof Error ? readableReason(error) : String(error);
  return {
    kind: 'network',
    message: `the request to ${url.hostname}:${port} failed: ${reason}${codes[0] && !reason.includes(codes[0]) ? ` (${codes[0]})` : ''}`,
  };
}

/** OpenSSL's messages carry source paths and hex ids; its reason phrase is what a person needs. */
function readableReason(error: Error): string {
  const openssl = /SSL routines:[^:]*:([^:]+)/.exec(error.message);
  return openssl ? `TLS handshake failed (${openssl[1]})` : error.message.trim();
}

/** The error's code, or each attempt's code when Node tried several addresses (AggregateError). */
function errorCodes(error: unknown): string[] {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.flatMap(errorCodes);
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? [code] : [];
}

/** Settles with `promise`, or rejects once `signal` aborts (name resolution has no signal of its own). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
