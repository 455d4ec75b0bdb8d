import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { HttpError } from '../../domain/shared/http-error';

/**
 * Passwords are hashed with scrypt (memory-hard). The parameters travel inside the stored
 * string (`scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`), so raising the cost later keeps old
 * hashes verifiable.
 */
const KEY_LENGTH = 32;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;

/** How many hashes this process computes at once, and how many more may wait (decision 0172). */
export interface PasswordHashLimits {
  concurrency: number;
  queue: number;
}

export const DEFAULT_PASSWORD_HASH_LIMITS: PasswordHashLimits = { concurrency: 4, queue: 64 };

/**
 * Each scrypt hash takes 128 MiB (N = 2^17, r = 8) while it runs, in libuv's thread pool.
 * Without a bound, a burst of sign-ups or sign-ins would allocate that much per request at
 * once and exhaust the process's memory. So at most `concurrency` hashes run, `queue` more
 * wait in order, and any beyond are refused at once: 503 with `Retry-After`, nothing changed.
 */
class HashGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  limits: PasswordHashLimits = DEFAULT_PASSWORD_HASH_LIMITS;

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrency) {
      if (this.waiting.length >= this.limits.queue) {
        throw new HttpError(503, 'too many passwords are being checked right now; try again in a second', {}, { 'Retry-After': '1' });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await work();
    } finally {
      // The slot passes to the next waiter as is, or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

const gate = new HashGate();

/** Sets this process's bound (createApp, from PASSWORD_HASH_CONCURRENCY and PASSWORD_HASH_QUEUE). */
export function limitPasswordHashing(limits: PasswordHashLimits): void {
  gate.limits = limits;
}

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  return gate.run(() => deriveNow(password, salt, logN, r, p));
}

function deriveNow(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
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
  // A refused hash (the gate full) must not be remembered as the decoy.
  decoy ??= hashPassword(randomBytes(16).toString('hex'), logN).catch((err: unknown) => {
    decoy = undefined;
    throw err;
  });
  return decoy;
}
