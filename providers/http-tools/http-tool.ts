import http, { type OutgoingHttpHeaders } from 'node:http';
import { isRedirect, sendGuarded, type GuardedResponse, type RequestFailureKind } from '../net/guarded-request';
import type { Resolver } from '../net/ssrf-guard';
import { prettyJson } from './pretty-json';

/**
 * Runs one HTTP tool call: what the conversation engine does when the language model calls a
 * tool, and what `POST /tools/test` shows an agent's author. It never throws for anything the
 * target (or the network) does; every outcome is an `HttpToolRun`.
 *
 * - GET sends the arguments as query parameters (set over same-named ones in the URL;
 *   strings as they are, numbers and booleans as text, objects and arrays as JSON text,
 *   null and undefined left out); POST sends them as a JSON body.
 * - The target must pass the SSRF guard (`ssrf-guard.ts`); the request connects to the
 *   checked addresses only.
 * - Redirects are not followed (following one would connect to an unchecked target): the
 *   3xx status and its `Location` are reported.
 * - `timeout_seconds` bounds everything: name resolution, connecting, the answer's body.
 */

export type HttpMethod = 'GET' | 'POST';

/** The fields of an agent's tool (contract: Tool item) that the request needs. */
export interface HttpTool {
  method?: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  timeout_seconds?: number;
}

export type ToolArguments = Record<string, unknown>;

export type HttpToolErrorKind = 'invalid_url' | 'invalid_header' | 'http_status' | RequestFailureKind;

export interface HttpToolRun {
  /** True when the target answered 2xx. */
  ok: boolean;
  /** The target's HTTP status; null when no answer arrived. */
  status: number | null;
  /** From the start (including name resolution) to the end of the answer's body or the failure. */
  latency_ms: number;
  /** The answer's body: JSON laid out with two-space indents, other text as sent; cut to RESULT_MAX_CHARS. */
  result: string;
  /** The body was longer than `result` holds. */
  truncated: boolean;
  /** A redirect's `Location` (redirects are reported, not followed); null otherwise. */
  location: string | null;
  error: { kind: HttpToolErrorKind; message: string } | null;
  /** What was sent (headers are left out: they often carry credentials). */
  request: { method: HttpMethod; url: string };
}

export interface HttpToolOptions {
  /** TOOLS_ALLOW_PRIVATE_NETWORKS: let tools reach private, loopback and link-local addresses. */
  allowPrivateNetworks: boolean;
  /** Name resolution (default: the system's); tests give their own. */
  resolve?: Resolver;
  /** Aborted when the answer is no longer wanted (the caller talked over the reply): the run ends `canceled`. */
  signal?: AbortSignal;
}

/** What the language model reads back, about 750 tokens. */
export const RESULT_MAX_CHARS = 3000;
/** Bytes of an answer read at most; beyond that the body is cut without waiting for the rest. */
export const BODY_READ_LIMIT_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_SECONDS = 8;
const TIMEOUT_BOUNDS = { min: 1, max: 30 };

const USER_AGENT = 'Service-Tools/1.0';
/**
 * Headers a tool may not set: framing and connection headers are the client's business (a
 * wrong Content-Length breaks the request), and answers must arrive uncompressed to be read.
 */
const CLIENT_OWNED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'accept-encoding']);

type Failure = { kind: HttpToolErrorKind; message: string };
type PreparedRequest = { url: URL; headers: OutgoingHttpHeaders; body: string | null };

export async function runHttpTool(tool: HttpTool, args: ToolArguments, options: HttpToolOptions): Promise<HttpToolRun> {
  const started = performance.now();
  const method = tool.method ?? 'POST';
  const timeoutSeconds = Math.min(TIMEOUT_BOUNDS.max, Math.max(TIMEOUT_BOUNDS.min, tool.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS));
  const prepared = prepareRequest(method, tool, args);
  const run = (fields: Partial<HttpToolRun>): HttpToolRun => ({
    ok: false,
    status: null,
    result: '',
    truncated: false,
    location: null,
    error: null,
    ...fields,
    latency_ms: Math.round(performance.now() - started),
    request: { method, url: 'url' in prepared ? prepared.url.href : tool.url },
  });
  if ('kind' in prepared) return run({ error: prepared });

  const outcome = await sendGuarded(
    { ...prepared, method, timeoutMs: timeoutSeconds * 1000, bodyLimitBytes: BODY_READ_LIMIT_BYTES, signal: options.signal },
    options,
  );
  if (outcome.failure) return run({ error: outcome.failure });
  const { response } = outcome;
  const text = prettyJson(response.text) ?? response.text;
  const result = cut(text);
  const location = isRedirect(response.status) ? (response.headers.location ?? null) : null;
  const ok = response.status >= 200 && response.status < 300;
  return run({
    ok,
    status: response.status,
    result,
    truncated: response.cut || result.length < text.length,
    location,
    error: ok ? null : { kind: 'http_status', message: statusMessage(response, location) },
  });
}

function prepareRequest(method: HttpMethod, tool: HttpTool, args: ToolArguments): PreparedRequest | Failure {
  let url: URL;
  try {
    url = new URL(tool.url);
  } catch {
    return { kind: 'invalid_url', message: `not a valid URL: ${tool.url}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'invalid_url', message: 'the URL must start with http:// or https://' };

  const headers: OutgoingHttpHeaders = { 'user-agent': USER_AGENT, accept: 'application/json, text/plain;q=0.9, */*;q=0.8' };
  for (const [name, value] of Object.entries(tool.headers ?? {})) {
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch {
      return { kind: 'invalid_header', message: `header ${JSON.stringify(name)} has a name or value HTTP does not allow` };
    }
    if (!CLIENT_OWNED_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  headers['accept-encoding'] = 'identity';

  if (method === 'GET') {
    for (const [name, value] of Object.entries(args)) {
      if (value === undefined || value === null) continue;
      url.searchParams.set(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
    }
    return { url, headers, body: null };
  }
  const body = JSON.stringify(args);
  headers['content-type'] ??= 'application/json';
  headers['content-length'] = Buffer.byteLength(body);
  return { url, headers, body };
}

/** At most RESULT_MAX_CHARS, never splitting a surrogate pair. */
function cut(text: string): string {
  if (text.length <= RESULT_MAX_CHARS) return text;
  const end = /[\uD800-\uDBFF]/.test(text[RESULT_MAX_CHARS - 1]) ? RESULT_MAX_CHARS - 1 : RESULT_MAX_CHARS;
  return text.slice(0, end);
}

function statusMessage(response: GuardedResponse, location: string | null): string {
  const answered = `the server answered ${response.status} ${response.statusMessage}`.trimEnd();
  if (location === null) return answered;
  return `${answered}, a redirect to ${location}; redirects are not followed (only the tool's own URL is checked before connecting)`;
}
