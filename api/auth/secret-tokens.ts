import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Opaque bearer secrets (API keys, OAuth access tokens, invite links): random, shown once,
 * stored only as SHA-256. They carry 256 bits of entropy, so a fast hash is enough and lets a
 * lookup be one indexed equality query.
 */
export const API_KEY_PREFIX = 'vak_';
export const OAUTH_TOKEN_PREFIX = 'vao_';
export const INVITE_TOKEN_PREFIX = 'inv_';

/** How many leading characters of a key lists show (the fixed prefix plus 8). */
const SHOWN_LENGTH = API_KEY_PREFIX.length + 8;

export function newSecretToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Whether two stored hashes (hex of `hashSecretToken`) are the same, in constant time: a
 * comparison that stops at the first differing character would tell a caller, by its timing,
 * how much of a hash it has right. Used where a hash is compared in code rather than looked up
 * by an indexed equality query (refresh tokens).
 */
export function sameSecretHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Whether `hash` is one of `hashes`, each compared in constant time, all of them every time. */
export function amongSecretHashes(hashes: readonly string[], hash: string): boolean {
  return hashes.reduce((found, stored) => sameSecretHash(stored, hash) || found, false);
}

export function shownPrefix(key: string): string {
  return key.slice(0, SHOWN_LENGTH);
}
