import { createHash, randomBytes } from 'node:crypto';

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

export function shownPrefix(key: string): string {
  return key.slice(0, SHOWN_LENGTH);
}
