import { expect } from 'chai';
import { SessionTokens } from '../../api/auth/session-tokens';
import { signStreamToken, verifyStreamToken } from '../../domain/calls/stream-token';

/** The token of a call's audio stream URL: this call's stream only, briefly, nothing else. */
describe('audio stream tokens', () => {
  const secret = 'stream-secret-that-is-at-least-32-characters';
  const callId = '0123456789abcdef0123456789abcdef';

  it('name the call they were signed for', async () => {
    const token = await signStreamToken(secret, callId);
    expect(await verifyStreamToken(secret, token)).to.equal(callId);
  });

  it('expire: 300 s by default, or the given lifetime', async () => {
    const token = await signStreamToken(secret, callId);
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number; iat: number; aud: string; sub: string };
    expect(payload.exp - payload.iat).to.equal(300);
    expect(payload).to.include({ aud: 'media-stream', sub: callId });
    expect(await verifyStreamToken(secret, await signStreamToken(secret, callId, -5))).to.equal(null);
  });

  it('are refused when signed with another secret, changed, or not tokens at all', async () => {
    const token = await signStreamToken(secret, callId);
    expect(await verifyStreamToken('another-secret-that-is-at-least-32-characters', token)).to.equal(null);
    const [header, , signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'ffffffffffffffffffffffffffffffff', aud: 'media-stream', exp: 9_999_999_999 })).toString('base64url');
    expect(await verifyStreamToken(secret, `${header}.${forged}.${signature}`)).to.equal(null);
    for (const junk of ['', 'token', 'a.b.c', `${token}x`]) expect(await verifyStreamToken(secret, junk), junk).to.equal(null);
  });

  it('are not session tokens signed with the same secret, nor the other way round', async () => {
    const sessions = new SessionTokens(secret);
    const session = await sessions.sign({ userId: callId, sessionId: 's1', purpose: 'session' }, new Date(Date.now() + 60_000));
    expect(await verifyStreamToken(secret, session)).to.equal(null);
    expect(await sessions.verify(await signStreamToken(secret, callId), 'session')).to.equal(null);
  });
});
