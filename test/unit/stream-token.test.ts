import { expect } from 'chai';
import { SignJWT, jwtVerify } from 'jose';
import { SessionTokens } from '../../api/auth/session-tokens';
import { signStreamToken, streamTokenClaims } from '../../domain/calls/stream-token';

/** The token of a call's audio stream URL: this call's stream only, briefly, nothing else. */
describe('audio stream tokens', () => {
  const secret = 'stream-secret-that-is-at-least-32-characters';
  const callId = '0123456789abcdef0123456789abcdef';
  /** The call a token is good for, or null. */
  const callIdOf = (...args: Parameters<typeof streamTokenClaims>) => streamTokenClaims(...args)?.callId ?? null;

  it('name the call they were signed for', async () => {
    const token = signStreamToken(secret, callId);
    expect(callIdOf(secret, token)).to.equal(callId);
  });

  it('expire: 300 s by default, or the given lifetime', async () => {
    const token = signStreamToken(secret, callId);
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number; iat: number; aud: string; sub: string };
    expect(payload.exp - payload.iat).to.equal(300);
    expect(payload).to.include({ aud: 'media-stream', sub: callId });
    expect(callIdOf(secret, signStreamToken(secret, callId, -5))).to.equal(null);
  });

  it('are refused when signed with another secret, changed, or not tokens at all', async () => {
    const token = signStreamToken(secret, callId);
    expect(callIdOf('another-secret-that-is-at-least-32-characters', token)).to.equal(null);
    const [header, , signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'ffffffffffffffffffffffffffffffff', aud: 'media-stream', exp: 9_999_999_999 })).toString('base64url');
    expect(callIdOf(secret, `${header}.${forged}.${signature}`)).to.equal(null);
    for (const junk of ['', 'token', 'a.b.c', `${token}x`]) expect(callIdOf(secret, junk), junk).to.equal(null);
  });

  it('are not session tokens signed with the same secret, nor the other way round', async () => {
    const sessions = new SessionTokens(secret);
    const session = await sessions.sign({ userId: callId, sessionId: 's1', purpose: 'session' }, new Date(Date.now() + 60_000));
    expect(callIdOf(secret, session)).to.equal(null);
    expect(await sessions.verify(signStreamToken(secret, callId), 'session')).to.equal(null);
  });

  // The tokens are signed with node:crypto's HMAC (0243); jose, the JWT library the service's
  // other tokens use, is the reference they are held to, both ways.
  const key = new TextEncoder().encode(secret);

  it('are JWTs jose checks, and jose-signed ones are taken (HS256, the audience of their kind)', async () => {
    const { payload, protectedHeader } = await jwtVerify(signStreamToken(secret, callId, 60, 'browser'), key, {
      audience: 'browser-stream',
      algorithms: ['HS256'],
    });
    expect(protectedHeader).to.deep.equal({ alg: 'HS256' });
    expect(payload).to.include({ sub: callId, aud: 'browser-stream' });
    expect(payload.exp! - payload.iat!).to.equal(60);
    const now = Math.floor(Date.now() / 1000);
    const byJose = (alg: string, claims: { sub?: string; aud?: string; exp?: number }) => {
      const jwt = new SignJWT({}).setProtectedHeader({ alg }).setIssuedAt(now);
      if (claims.sub !== undefined) jwt.setSubject(claims.sub);
      if (claims.aud !== undefined) jwt.setAudience(claims.aud);
      if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp);
      return jwt.sign(key);
    };
    expect(callIdOf(secret, await byJose('HS256', { sub: callId, aud: 'media-stream', exp: now + 60 }))).to.equal(callId);
    expect(callIdOf(secret, await byJose('HS256', { sub: callId, aud: 'browser-stream', exp: now + 60 }), 'browser')).to.equal(callId);
    const refused = {
      'another algorithm (HS512)': await byJose('HS512', { sub: callId, aud: 'media-stream', exp: now + 60 }),
      'another audience': await byJose('HS256', { sub: callId, aud: 'browser-stream', exp: now + 60 }),
      'no expiry': await byJose('HS256', { sub: callId, aud: 'media-stream' }),
      'expired this second': await byJose('HS256', { sub: callId, aud: 'media-stream', exp: now }),
      'no subject': await byJose('HS256', { aud: 'media-stream', exp: now + 60 }),
      'an empty subject': await byJose('HS256', { sub: '', aud: 'media-stream', exp: now + 60 }),
    };
    for (const [what, token] of Object.entries(refused)) expect(callIdOf(secret, token), what).to.equal(null);
  });

  it('refuse an unsigned token and another spelling of the signature', () => {
    const [, payload, signature] = signStreamToken(secret, callId).split('.');
    const none = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    expect(callIdOf(secret, `${none}.${payload}.`), 'alg none').to.equal(null);
    const header = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');
    expect(callIdOf(secret, `${header}.${payload}.${signature}`), 'the token as signed').to.equal(callId);
    expect(callIdOf(secret, `${header}.${payload}.${signature}=`), 'padded').to.equal(null);
  });

  it("name the call's agent when the answer knew it (0244), and nothing else changes", async () => {
    const agentId = 'fedcba9876543210fedcba9876543210';
    const token = signStreamToken(secret, callId, 60, 'telephony', agentId);
    expect(streamTokenClaims(secret, token)).to.deep.equal({ callId, agentId });
    expect(callIdOf(secret, token)).to.equal(callId);
    expect((await jwtVerify(token, key, { audience: 'media-stream', algorithms: ['HS256'] })).payload).to.include({ sub: callId, agt: agentId });
    expect(streamTokenClaims(secret, signStreamToken(secret, callId))).to.deep.equal({ callId, agentId: null });
    expect(streamTokenClaims('another-secret-that-is-at-least-32-characters', token)).to.equal(null);
  });
});
