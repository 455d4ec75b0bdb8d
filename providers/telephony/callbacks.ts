import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProviderCallStatus, ProviderStatusUpdate } from '../../contracts/calls';

/**
 * Plivo's status callbacks: form-encoded POSTs to the ring, answer and hang-up URLs given at
 * call creation, signed with the account's auth token (signature V3). A receiver must check
 * the signature against the URL Plivo was given (the public URL, not the one a proxy
 * forwarded to) and the form fields exactly as they arrived.
 */

export const PLIVO_NONCE_HEADER = 'X-Plivo-Signature-V3-Nonce';
export const PLIVO_SIGNATURE_HEADER = 'X-Plivo-Signature-V3';

/**
 * How long the provider's answering-machine detection listens (Plivo's `machine_detection_time`,
 * 2000 to 10000 ms): the media node holds a screened call's welcome at most about this long.
 */
export const MACHINE_DETECTION_TIME_MS = 4_000;

/** The decoded form fields of a callback (`CallUUID`, `CallStatus`, ...). */
export type CallbackParams = Record<string, string>;

/** A status callback as the call workflow needs it; the route adds `at`. */
export type StatusCallback = Omit<ProviderStatusUpdate, 'at'>;

/**
 * Signature V3 as Plivo's SDKs compute it (plivo-node `dist/utils/v3Security.js`
 * `validateV3Signature`; plivo-python `plivo/utils/signature_v3.py`): base64 HMAC-SHA256,
 * keyed by the auth token, of
 * - the URL without its query or fragment (scheme, host, port and path as given);
 * - then, for a POST: `?` when the URL had a query or the form has fields; the query's fields
 *   decoded and sorted by name (a repeated name's values sorted too) as `name=value` joined by
 *   `&`; a `.` when there were both query fields and form fields; then every form field as
 *   name + value, sorted by name;
 * - for a GET: the query's fields and the given fields together, as the query above, after a
 *   `?` when there are any (no `.`, no name + value part);
 * - then `.` and the nonce.
 */
export function signPlivoCallback(authToken: string, url: string, params: CallbackParams, nonce: string, method: 'POST' | 'GET' = 'POST'): string {
  return hmacOf(authToken, plivoSignedText(url, params, nonce, method));
}

/** The text signature V3 signs (see signPlivoCallback). */
export function plivoSignedText(url: string, params: CallbackParams, nonce: string, method: 'POST' | 'GET' = 'POST'): string {
  const { base, query } = splitUrl(url);
  const queryFields = parseQuery(query);
  if (method === 'GET') {
    for (const [name, value] of Object.entries(params)) (queryFields[name] ??= []).push(value);
    const sortedQuery = sortedQueryText(queryFields);
    return `${base}${sortedQuery ? `?${sortedQuery}` : ''}.${nonce}`;
  }
  const sortedQuery = sortedQueryText(queryFields);
  const hasFields = Object.keys(params).length > 0;
  const head = sortedQuery || hasFields ? `${base}?${sortedQuery}${sortedQuery && hasFields ? '.' : ''}` : base;
  const fields = Object.keys(params)
    .sort()
    .map((name) => `${name}${params[name]}`)
    .join('');
  return `${head}${fields}.${nonce}`;
}

function hmacOf(authToken: string, text: string | Buffer): string {
  return createHmac('sha256', authToken).update(text).digest('base64');
}

/** The URL up to its query (without user info, as plivo-node rebuilds it), and the query. */
function splitUrl(url: string): { base: string; query: string } {
  const withoutFragment = url.split('#', 1)[0]!;
  const at = withoutFragment.indexOf('?');
  const [head, query] = at === -1 ? [withoutFragment, ''] : [withoutFragment.slice(0, at), withoutFragment.slice(at + 1)];
  // `scheme://user:password@host...`: the SDK keeps the scheme, host, port and path only.
  return { base: head.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1'), query };
}

/** A query's fields, decoded as a form is (`+` is a space), each name with its values in order. */
function parseQuery(query: string): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(query)) (fields[name] ??= []).push(value);
  return fields;
}

function sortedQueryText(fields: Record<string, string[]>): string {
  return Object.keys(fields)
    .sort()
    .flatMap((name) => [...fields[name]!].sort().map((value) => `${name}=${value}`))
    .join('&');
}

export interface ReceivedCallback {
  authToken: string;
  /** The URL the callback was addressed to, exactly as given to Plivo. */
  url: string;
  params: CallbackParams;
  /** The `X-Plivo-Signature-V3-Nonce` header, when there was one. */
  nonce: string | undefined;
  /** The `X-Plivo-Signature-V3` header, when there was one. */
  signature: string | undefined;
}

/**
 * The signature V3 that matches the callback (its own value, the same whatever else the header
 * holds), or null; comparisons take constant time. While an auth token is being rotated Plivo
 * sends one signature per token, comma-separated.
 */
export function matchingPlivoSignature(callback: ReceivedCallback): string | null {
  const { authToken, url, params, nonce, signature } = callback;
  if (!nonce || !signature) return null;
  const text = plivoSignedText(url, params, nonce);
  const expected = [hmacOf(authToken, text)];
  // The SDKs part ways on text beyond ASCII: plivo-node signs its UTF-8 bytes, plivo-python
  // encodes them to UTF-8 once more (each byte taken as a character). Either is Plivo's.
  if (Buffer.byteLength(text) !== text.length) expected.push(hmacOf(authToken, Buffer.from(Buffer.from(text, 'utf8').toString('latin1'), 'utf8')));
  for (const candidate of signature.split(',')) {
    const given = Buffer.from(candidate.trim());
    const match = expected.find((value) => given.length === Buffer.byteLength(value) && timingSafeEqual(given, Buffer.from(value)));
    if (match) return match;
  }
  return null;
}

/** True when the callback carries a valid V3 signature. */
export function verifyPlivoCallback(callback: ReceivedCallback): boolean {
  return matchingPlivoSignature(callback) !== null;
}

/**
 * Every `CallStatus` Plivo documents (docs.plivo.com "Call status", `/docs/voice/xml/request/call-status`,
 * and the Application page's callback fields, which add `failed`), each with the call status
 * the service and the contract use for it (docs/decisions/0176): `cancel` (the call was
 * canceled by its caller: for an outbound call, by us) is `canceled`; `timeout` (the call
 * could not be connected in time, a carrier's or Plivo's own delay) is `no-answer`, the
 * callee never having been reached.
 */
export const PLIVO_CALL_STATUSES: Readonly<Record<string, ProviderCallStatus>> = Object.freeze({
  ringing: 'ringing',
  'in-progress': 'in-progress',
  completed: 'completed',
  'no-answer': 'no-answer',
  busy: 'busy',
  failed: 'failed',
  cancel: 'canceled',
  timeout: 'no-answer',
});

/** The call status of Plivo's `CallStatus` word, or null for a word Plivo does not document. */
export function callStatusOfPlivo(word: string | undefined): ProviderCallStatus | null {
  return word !== undefined && Object.hasOwn(PLIVO_CALL_STATUSES, word) ? PLIVO_CALL_STATUSES[word]! : null;
}

/**
 * The call's new status from a callback's fields, or null when they are not a status
 * callback of a call (no call id, a status Plivo does not document). Plivo's words are
 * mapped to the service's here, so that the call workflow sees only its own vocabulary.
 */
export function parseStatusCallback(params: CallbackParams): StatusCallback | null {
  const status = callStatusOfPlivo(params.CallStatus);
  // RequestUUID is the id call creation answered with, so it comes first; Plivo sends it
  // with every callback of an outbound call.
  const providerCallId = params.RequestUUID || params.CallUUID;
  if (!status || !providerCallId) return null;
  const update: StatusCallback = { status, providerCallId };
  if (params.Duration !== undefined && /^\d+$/.test(params.Duration)) update.durationSeconds = Number(params.Duration);
  if (params.HangupCause) update.cause = params.HangupCause;
  return update;
}

/** The verdict of Plivo's answering-machine detection (`Machine=true|false`), or null when the fields carry none. */
export function parseMachineDetection(params: CallbackParams): { answeredBy: 'human' | 'machine'; providerCallId: string } | null {
  const machine = params.Machine?.toLowerCase();
  const providerCallId = params.RequestUUID || params.CallUUID;
  if ((machine !== 'true' && machine !== 'false') || !providerCallId) return null;
  return { answeredBy: machine === 'true' ? 'machine' : 'human', providerCallId };
}
