import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Passwords are hashed with scrypt (memory-hard). The parameters travel inside the stored
 * string (`scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`), so raising the cost later keeps old
 * hashes verifiable.
 */
const KEY_LENGTH = 32;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string, logN: number): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, logN, BLOCK_SIZE, PARALLELISM);
  return ['scrypt', logN, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Constant-time comparison of the derived key; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, logN, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(logN), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash no password matches, verified against when an address is unknown so that sign-in
 * takes as long for unknown addresses as for known ones.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(logN: number): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'), logN);
  return decoy;
}
