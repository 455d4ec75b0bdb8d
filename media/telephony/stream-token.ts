import { SignJWT, errors, jwtVerify } from 'jose';

/**
 * The token in a call's audio stream URL (`.../telephony/streams/{call_id}?token=...`). The
 * API signs it when it answers the provider's answer request; the media node checks it when
 * the provider opens the WebSocket. The URL passes through the provider, so the token is
 * short-lived and good for one call's stream only: an HS256 JWT whose subject is the call id,
 * with its own audience, so that no other token of the service (sessions share the secret)
 * can stand in for it, nor it for them.
 */
const AUDIENCE = 'media-stream';

export async function signStreamToken(secret: string, callId: string, ttlSeconds = 300): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(callId)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(keyOf(secret));
}

/** The call id of a valid, unexpired stream token; null for anything else. */
export async function verifyStreamToken(secret: string, token: string): Promise<string | null> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), { audience: AUDIENCE, algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] });
    return typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null;
  } catch (err) {
    if (err instanceof errors.JOSEError) return null;
    throw err;
  }
}

function keyOf(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}
