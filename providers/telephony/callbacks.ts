import { createHmac, timingSafeEqual } from 'node:crypto';
import { PROVIDER_CALL_STATUSES, type ProviderCallStatus, type ProviderStatusUpdate } from '../../workflows/shared/calls';

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
 * Signature V3: base64 HMAC-SHA256, keyed by the auth token, of the URL, then every field
 * as name + value in name order, then `.` and the nonce.
 */
export function signPlivoCallback(authToken: string, url: string, params: CallbackParams, nonce: string): string {
  const fields = Object.keys(params)
    .sort()
    .map((name) => `${name}${params[name]}`)
    .join('');
  return createHmac('sha256', authToken).update(`${url}${fields}.${nonce}`).digest('base64');
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

/** True when the callback carries a valid V3 signature; the comparison takes constant time. */
export function verifyPlivoCallback(callback: ReceivedCallback): boolean {
  const { authToken, url, params, nonce, signature } = callback;
  if (!nonce || !signature) return false;
  const expected = Buffer.from(signPlivoCallback(authToken, url, params, nonce));
  // While an auth token is being rotated Plivo sends one signature per token, comma-separated.
  return signature.split(',').some((candidate) => {
    const given = Buffer.from(candidate.trim());
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * The call's new status from a callback's fields, or null when they are not a status
 * callback of a call (no call id, a status we do not know).
 */
export function parseStatusCallback(params: CallbackParams): StatusCallback | null {
  const status = params.CallStatus;
  // RequestUUID is the id call creation answered with, so it comes first; Plivo sends it
  // with every callback of an outbound call.
  const providerCallId = params.RequestUUID || params.CallUUID;
  if (!isProviderCallStatus(status) || !providerCallId) return null;
  const update: StatusCallback = { status, providerCallId };
  if (params.Duration !== undefined && /^\d+$/.test(params.Duration)) update.durationSeconds = Number(params.Duration);
  if (params.HangupCause) update.cause = params.HangupCause;
  return update;
}

function isProviderCallStatus(value: string | undefined): value is ProviderCallStatus {
  return (PROVIDER_CALL_STATUSES as readonly string[]).includes(value ?? '');
}

/** The verdict of Plivo's answering-machine detection (`Machine=true|false`), or null when the fields carry none. */
export function parseMachineDetection(params: CallbackParams): { answeredBy: 'human' | 'machine'; providerCallId: string } | null {
  const machine = params.Machine?.toLowerCase();
  const providerCallId = params.RequestUUID || params.CallUUID;
  if ((machine !== 'true' && machine !== 'false') || !providerCallId) return null;
  return { answeredBy: machine === 'true' ? 'machine' : 'human', providerCallId };
}
