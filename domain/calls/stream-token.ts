import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token in a call's audio stream URL. Telephony: `.../telephony/streams/{call_id}?token=...`,
 * signed by the API when it answers the provider's answer request. Browser calls:
 * `.../browser/calls/{call_id}?token=...`, signed by `POST /calls/browser` and handed to the
 * person's browser. The media node checks it when the WebSocket opens. The URL passes through
 * the provider or the browser, so the token is short-lived and good for one call's stream
 * only: an HS256 JWT (RFC 7519) whose subject is the call id, with an audience per kind of
 * stream, so that no other token of the service (sessions share the secret) can stand in for
 * it, nor it for them, nor a browser token for a telephony stream.
 *
 * Signed and checked synchronously with node:crypto's HMAC (docs/decisions/0243): both are on
 * the callee's silence (the answer request, the stream's upgrade), where WebCrypto's
 * asynchronous jobs (jose's only way in Node) waited up to half a second for the event loop
 * and the thread pool of a process saturated by a burst. The tokens are the same JWTs jose
 * signs and checks (test/unit/stream-token.test.ts holds the two to each other).
 */
export type StreamKind = 'telephony' | 'browser';

const AUDIENCES: Record<StreamKind, string> = { telephony: 'media-stream', browser: 'browser-stream' };
/** The only header these tokens have: `{"alg":"HS256"}`, as jose writes it. */
const HEADER = base64url(JSON.stringify({ alg: 'HS256' }));

/** How long a browser call's page has to open its stream (the person may still be granting the microphone). */
export const BROWSER_STREAM_TOKEN_TTL_SECONDS = 60;

export interface SignedStreamToken {
  token: string;
  expiresAt: Date;
}

/** What a valid token says: its call, and the call's agent when the answer knew it (`agt`, docs/decisions/0244). */
export interface StreamTokenClaims {
  callId: string;
  agentId: string | null;
}

/**
 * `agentId`: the call's agent, as its dial named it in the answer URL; the media node then reads
 * the call and its agent at once (0244). Only a hint: the node checks it against the call.
 */
export function signStreamToken(secret: string, callId: string, ttlSeconds = 300, kind: StreamKind = 'telephony', agentId?: string): string {
  return signStreamTokenWithExpiry(secret, callId, ttlSeconds, kind, agentId).token;
}

/** The token and when it expires (the browser call's answer states it). */
export function signStreamTokenWithExpiry(secret: string, callId: string, ttlSeconds: number, kind: StreamKind, agentId?: string): SignedStreamToken {
  const now = Math.floor(Date.now() / 1000);
  const payload = base64url(JSON.stringify({ sub: callId, aud: AUDIENCES[kind], iat: now, exp: now + ttlSeconds, ...(agentId ? { agt: agentId } : {}) }));
  const signingInput = `${HEADER}.${payload}`;
  return { token: `${signingInput}.${signatureOf(secret, signingInput).toString('base64url')}`, expiresAt: new Date((now + ttlSeconds) * 1000) };
}

/**
 * The call of a valid, unexpired stream token of this kind, and the agent it names (null when it
 * names none, or not as a non-empty string); null for anything else: another header (another
 * algorithm, `none`), a signature that does not match, another audience, an expiry passed or
 * missing, no subject.
 */
export function streamTokenClaims(secret: string, token: string, kind: StreamKind = 'telephony'): StreamTokenClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [header, payload, signature] = parts as [string, string, string];
  if (header !== HEADER) return null;
  const expected = signatureOf(secret, `${header}.${payload}`);
  const given = Buffer.from(signature, 'base64url');
  // The signature must be exactly the base64url of the 32 bytes (no other spelling of them).
  if (given.length !== expected.length || given.toString('base64url') !== signature || !timingSafeEqual(given, expected)) return null;
  const claims = claimsOf(payload);
  if (!claims || claims.aud !== AUDIENCES[kind]) return null;
  if (typeof claims.exp !== 'number' || claims.exp <= Math.floor(Date.now() / 1000)) return null;
  if (typeof claims.sub !== 'string' || claims.sub === '') return null;
  return { callId: claims.sub, agentId: typeof claims.agt === 'string' && claims.agt !== '' ? claims.agt : null };
}

function claimsOf(payload: string): { sub?: unknown; aud?: unknown; exp?: unknown; agt?: unknown } | null {
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims) ? claims : null;
  } catch {
    return null;
  }
}

function signatureOf(secret: string, signingInput: string): Buffer {
  return createHmac('sha256', secret).update(signingInput).digest();
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
