import { SignJWT, errors, jwtVerify } from 'jose';

/**
 * The token in a call's audio stream URL. Telephony: `.../telephony/streams/{call_id}?token=...`,
 * signed by the API when it answers the provider's answer request. Browser calls:
 * `.../browser/calls/{call_id}?token=...`, signed by `POST /calls/browser` and handed to the
 * person's browser. The media node checks it when the WebSocket opens. The URL passes through
 * the provider or the browser, so the token is short-lived and good for one call's stream
 * only: an HS256 JWT whose subject is the call id, with an audience per kind of stream, so
 * that no other token of the service (sessions share the secret) can stand in for it, nor it
 * for them, nor a browser token for a telephony stream.
 */
export type StreamKind = 'telephony' | 'browser';

const AUDIENCES: Record<StreamKind, string> = { telephony: 'media-stream', browser: 'browser-stream' };

/** How long a browser call's page has to open its stream (the person may still be granting the microphone). */
export const BROWSER_STREAM_TOKEN_TTL_SECONDS = 60;

export interface SignedStreamToken {
  token: string;
  expiresAt: Date;
}

export async function signStreamToken(secret: string, callId: string, ttlSeconds = 300, kind: StreamKind = 'telephony'): Promise<string> {
  return (await signStreamTokenWithExpiry(secret, callId, ttlSeconds, kind)).token;
}

/** The token and when it expires (the browser call's answer states it). */
export async function signStreamTokenWithExpiry(secret: string, callId: string, ttlSeconds: number, kind: StreamKind): Promise<SignedStreamToken> {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(callId)
    .setAudience(AUDIENCES[kind])
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(keyOf(secret));
  return { token, expiresAt: new Date((now + ttlSeconds) * 1000) };
}

/** The call id of a valid, unexpired stream token of this kind; null for anything else. */
export async function verifyStreamToken(secret: string, token: string, kind: StreamKind = 'telephony'): Promise<string | null> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), { audience: AUDIENCES[kind], algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] });
    return typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null;
  } catch (err) {
    if (err instanceof errors.JOSEError) return null;
    throw err;
  }
}

function keyOf(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}
