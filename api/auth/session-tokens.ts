import { SignJWT, jwtVerify, errors } from 'jose';

/**
 * Session tokens are HS256 JWTs naming a session record (`sid`). The signature only proves
 * the token is ours; whether it still counts is decided by the record (see credentials.ts).
 * Two-factor challenges are short-lived JWTs of another type, good only for /auth/login/2fa.
 * The OAuth consent page signs its own two kinds (a challenge, and "signed in on this
 * page"), each bound (`bnd`) to one authorization request, so they are good for nothing else.
 */
export type TokenPurpose = 'session' | 'two_factor' | 'oauth_two_factor' | 'oauth_consent';

export interface TokenClaims {
  userId: string;
  sessionId?: string;
  purpose: TokenPurpose;
  /** What the token is bound to (the consent page's tokens: a digest of the authorization request). */
  binding?: string;
}

const ISSUER = 'voice-agent-service';

export class SessionTokens {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  sign(claims: TokenClaims, expiresAt: Date): Promise<string> {
    return new SignJWT({ typ: claims.purpose, ...(claims.sessionId ? { sid: claims.sessionId } : {}), ...(claims.binding ? { bnd: claims.binding } : {}) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.userId)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.key);
  }

  /** The claims of a valid, unexpired token of the given purpose; null for anything else. */
  async verify(token: string, purpose: TokenPurpose): Promise<TokenClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      if (payload.typ !== purpose || typeof payload.sub !== 'string') return null;
      const sessionId = typeof payload.sid === 'string' ? payload.sid : undefined;
      if (purpose === 'session' && !sessionId) return null;
      const binding = typeof payload.bnd === 'string' ? payload.bnd : undefined;
      return { userId: payload.sub, sessionId, purpose, ...(binding ? { binding } : {}) };
    } catch (err) {
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
  }
}
