import { expect } from 'chai';
import { base32Decode, base32Encode, hotp, matchTotp, otpauthUri, totpCode } from '../../api/auth/totp';

describe('TOTP (RFC 6238)', () => {
  const rfcKey = Buffer.from('12345678901234567890');

  it('matches the RFC 6238 SHA-1 test vectors (8 digits)', () => {
    const vectors: [number, string][] = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ];
    for (const [seconds, expected] of vectors) expect(hotp(rfcKey, Math.floor(seconds / 30), 8)).to.equal(expected);
  });

  it('matches the RFC 4226 HOTP vectors (6 digits)', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, counter) => expect(hotp(rfcKey, counter)).to.equal(code));
  });

  it('round-trips base32 as authenticator apps use it', () => {
    expect(base32Encode(rfcKey)).to.equal('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    expect(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ').equals(rfcKey)).to.equal(true);
  });

  it('accepts one step of drift either way and nothing beyond, and refuses steps already used', () => {
    const secret = base32Encode(rfcKey);
    const at = new Date(1_700_000_000_000);
    const step = Math.floor(at.getTime() / 30_000);
    expect(matchTotp(secret, totpCode(secret, at), at)).to.equal(step);
    expect(matchTotp(secret, totpCode(secret, new Date(at.getTime() - 30_000)), at)).to.equal(step - 1);
    expect(matchTotp(secret, totpCode(secret, new Date(at.getTime() + 30_000)), at)).to.equal(step + 1);
    expect(matchTotp(secret, totpCode(secret, new Date(at.getTime() - 60_000)), at)).to.equal(null);
    expect(matchTotp(secret, totpCode(secret, at), at, step)).to.equal(null);
    expect(matchTotp(secret, '12345', at)).to.equal(null);
  });

  it('writes the otpauth URI authenticator apps scan', () => {
    const uri = new URL(otpauthUri('ABC', 'a@example.com', 'Voice Agent Service'));
    expect(uri.protocol).to.equal('otpauth:');
    expect(uri.host).to.equal('totp');
    expect(decodeURIComponent(uri.pathname)).to.equal('/Voice Agent Service:a@example.com');
    expect(uri.searchParams.get('secret')).to.equal('ABC');
    expect(uri.searchParams.get('period')).to.equal('30');
  });
});
