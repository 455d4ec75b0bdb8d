import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { keyIdOf, needsReseal, newDataKey, open, parseDataKeys, seal, SealedSecretError, SEALED_PREFIX } from '../../contracts/secret-box';
import { localDataKeys } from '../../scripts/infra/local-data-keys';

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2).toString('base64');

/** Envelope encryption of stored secrets (docs/decisions/0196). */
describe('secret box', () => {
  const ring = parseDataKeys(`k1:${K1}`, undefined);

  it('round-trips a value, with a fresh data key and IV each time', () => {
    const secret = 'whsec_Zm9vYmFyYmF6 ünïcödé';
    const a = seal(ring, secret);
    const b = seal(ring, secret);
    expect(a.startsWith(`${SEALED_PREFIX}k1:`)).to.equal(true);
    expect(a).not.to.contain(secret);
    expect(a).not.to.equal(b);
    // The wrapped data keys differ too: one per value.
    expect(a.split(':')[3]).not.to.equal(b.split(':')[3]);
    expect(open(ring, a)).to.equal(secret);
    expect(open(ring, b)).to.equal(secret);
    expect(open(ring, seal(ring, ''))).to.equal('');
  });

  it('fails with the wrong key under the same id', () => {
    const other = parseDataKeys(`k1:${K2}`, undefined);
    expect(() => open(other, seal(ring, 'x'))).to.throw(SealedSecretError, 'does not decrypt');
  });

  it('fails when any part was altered: the value, the wrapped key, or the key id', () => {
    const sealed = seal(parseDataKeys(`k1:${K1},k2:${K1}`, 'k1'), 'tamper-me');
    const both = parseDataKeys(`k1:${K1},k2:${K1}`, 'k1');
    const parts = sealed.split(':');
    const flip = (b64: string) => {
      const bytes = Buffer.from(b64, 'base64url');
      bytes[20] = bytes[20]! ^ 1;
      return bytes.toString('base64url');
    };
    expect(() => open(both, [...parts.slice(0, 4), flip(parts[4]!)].join(':'))).to.throw(SealedSecretError);
    expect(() => open(both, [...parts.slice(0, 3), flip(parts[3]!), parts[4]].join(':'))).to.throw(SealedSecretError);
    // Same key material under another id: the id is authenticated, so relabelling fails.
    expect(() => open(both, [parts[0], parts[1], 'k2', parts[3], parts[4]].join(':'))).to.throw(SealedSecretError);
    expect(() => open(both, `${SEALED_PREFIX}k1:abc`)).to.throw(SealedSecretError, 'malformed');
  });

  it('reads with the key its id names: new values under the current key, old ones still open', () => {
    const old = parseDataKeys(`k1:${K1}`, undefined);
    const rotated = parseDataKeys(`k1:${K1},k2:${K2}`, 'k2');
    const before = seal(old, 'old value');
    const after = seal(rotated, 'new value');
    expect(keyIdOf(before)).to.equal('k1');
    expect(keyIdOf(after)).to.equal('k2');
    expect(open(rotated, before)).to.equal('old value');
    expect(open(rotated, after)).to.equal('new value');
    expect(needsReseal(rotated, before)).to.equal(true);
    expect(needsReseal(rotated, after)).to.equal(false);
    expect(() => open(old, after)).to.throw(SealedSecretError, 'key "k2"');
  });

  it('reads a plaintext value stored before encryption as it is, and marks it for sealing', () => {
    expect(open(ring, 'whsec_legacy')).to.equal('whsec_legacy');
    expect(keyIdOf('JBSWY3DPEHPK3PXP')).to.equal(null);
    expect(needsReseal(ring, 'JBSWY3DPEHPK3PXP')).to.equal(true);
  });

  it('parses DATA_KEYS and DATA_KEY_CURRENT, refusing what would not work', () => {
    expect(parseDataKeys(` k1:${K1} , k2:${K2} `, 'k2').current).to.equal('k2');
    expect(parseDataKeys(`k1:${Buffer.alloc(32, 1).toString('base64url')}`, undefined).keys.get('k1')).to.deep.equal(Buffer.alloc(32, 1));
    expect(() => parseDataKeys('', undefined)).to.throw('at least one key');
    expect(() => parseDataKeys(`k1:${K1},k2:${K2}`, undefined)).to.throw('DATA_KEY_CURRENT must be set');
    expect(() => parseDataKeys(`k1:${K1}`, 'k9')).to.throw('not one of the key ids');
    expect(() => parseDataKeys(`k1:${K1},k1:${K2}`, 'k1')).to.throw('twice');
    expect(() => parseDataKeys('k1:c2hvcnQ=', undefined)).to.throw('32 random bytes');
    expect(() => parseDataKeys(`bad id:${K1}`, undefined)).to.throw('key ids');
    expect(() => parseDataKeys(K1, undefined)).to.throw('DATA_KEYS must be a comma list');
    expect(Buffer.from(newDataKey(), 'base64')).to.have.length(32);
  });

  it('npm start makes the local key once, readable by its owner alone, and reuses it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'data-keys-'));
    try {
      const first = localDataKeys(path.join(dir, 'data'));
      const file = path.join(dir, 'data', 'data-keys');
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      expect(parseDataKeys(first, undefined).current).to.equal('local');
      expect(localDataKeys(path.join(dir, 'data'))).to.equal(first);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
