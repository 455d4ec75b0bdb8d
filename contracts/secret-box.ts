import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (docs/decisions/0196): envelope encryption with AES-256-GCM. Each value is
 * encrypted under its own random 256-bit data key; the data key is encrypted (wrapped) under a
 * master key that the configuration names by a key id (`DATA_KEYS`, `DATA_KEY_CURRENT`). The
 * stored form is one string, so it fits every field that held the plaintext:
 *
 *   enc:v1:<key id>:<wrapped data key>:<sealed value>
 *
 * both parts base64url of `iv (12 bytes) | ciphertext | GCM tag (16 bytes)`. The prefix and key
 * id are the additional data of both encryptions, so neither can be swapped unnoticed. A value
 * without the prefix is a plaintext one stored before encryption existed: it still reads, and
 * is sealed when written next or by `npm run keys:rotate`.
 */

export const SEALED_PREFIX = 'enc:v1:';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface DataKeyRing {
  /** Master keys by id: every one decrypts, so values written under an older key still read. */
  keys: ReadonlyMap<string, Buffer>;
  /** The id of the key new values are written under. */
  current: string;
}

/** A stored value that cannot be opened: its key is not configured, or it was altered. */
export class SealedSecretError extends Error {}

/**
 * `kid1:base64key,kid2:base64key` (each key 32 bytes, base64 or base64url) and the current id;
 * with one key the current id may be left out. Throws naming the setting on anything else.
 */
export function parseDataKeys(raw: string, current: string | undefined): DataKeyRing {
  const keys = new Map<string, Buffer>();
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.indexOf(':');
    const id = at < 0 ? '' : entry.slice(0, at);
    if (!KEY_ID.test(id))
      throw new Error(
        `DATA_KEYS must be a comma list of <key id>:<base64 key> with key ids of letters, digits, _ or - (at most 32), got "${at < 0 ? entry.slice(0, 8) + '…' : id}"`,
      );
    if (keys.has(id)) throw new Error(`DATA_KEYS names key id "${id}" twice`);
    const key = Buffer.from(entry.slice(at + 1), 'base64');
    if (key.length !== KEY_BYTES)
      throw new Error(`DATA_KEYS key "${id}" must be ${KEY_BYTES} random bytes in base64 (openssl rand -base64 32), got ${key.length} bytes`);
    keys.set(id, key);
  }
  if (keys.size === 0) throw new Error('DATA_KEYS must name at least one key');
  const chosen = current || (keys.size === 1 ? [...keys.keys()][0]! : '');
  if (!chosen) throw new Error('DATA_KEY_CURRENT must be set when DATA_KEYS has several keys (the one new values are encrypted with)');
  if (!keys.has(chosen)) throw new Error(`DATA_KEY_CURRENT "${chosen}" is not one of the key ids of DATA_KEYS`);
  return { keys, current: chosen };
}

/** A new master key, as DATA_KEYS carries it. */
export function newDataKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

/** The id of the key a stored value is under; null for a plaintext (legacy) value. */
export function keyIdOf(stored: string): string | null {
  return isSealed(stored) ? (stored.slice(SEALED_PREFIX.length).split(':')[0] ?? null) : null;
}

/** Encrypts `plaintext` under a fresh data key, wrapped by the ring's current key. */
export function seal(ring: DataKeyRing, plaintext: string): string {
  const header = SEALED_PREFIX + ring.current + ':';
  const dataKey = randomBytes(KEY_BYTES);
  const wrapped = gcmEncrypt(ring.keys.get(ring.current)!, dataKey, header);
  const sealed = gcmEncrypt(dataKey, Buffer.from(plaintext, 'utf8'), header);
  return `${header}${wrapped}:${sealed}`;
}

/** The plaintext of a stored value; a plaintext (legacy) value is returned as it is. */
export function open(ring: DataKeyRing, stored: string): string {
  if (!isSealed(stored)) return stored;
  const [keyId, wrapped, sealed, ...rest] = stored.slice(SEALED_PREFIX.length).split(':');
  if (!keyId || !wrapped || !sealed || rest.length) throw new SealedSecretError('a stored secret is malformed');
  const masterKey = ring.keys.get(keyId);
  if (!masterKey) throw new SealedSecretError(`a stored secret is encrypted with key "${keyId}", which DATA_KEYS does not hold`);
  const header = SEALED_PREFIX + keyId + ':';
  const dataKey = gcmDecrypt(masterKey, wrapped, header);
  return gcmDecrypt(dataKey, sealed, header).toString('utf8');
}

/** Whether a stored value should be written again: plaintext, or under a key that is not the current one. */
export function needsReseal(ring: DataKeyRing, stored: string): boolean {
  return keyIdOf(stored) !== ring.current;
}

function gcmEncrypt(key: Buffer, plaintext: Buffer, aad: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

function gcmDecrypt(key: Buffer, encoded: string, aad: string): Buffer {
  const bytes = Buffer.from(encoded, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new SealedSecretError('a stored secret is malformed');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    // GCM's tag check: the wrong key, or the stored value was altered.
    throw new SealedSecretError('a stored secret does not decrypt: wrong key, or the value was altered');
  }
}

// The process's key ring, set once at start from the configuration (`useDataKeys`): the
// models' helpers seal and open with it, so no caller handles keys.
let processRing: DataKeyRing | null = null;

export function useDataKeys(ring: DataKeyRing): void {
  processRing = ring;
}

function ringOrFail(): DataKeyRing {
  // Fail closed: never store a secret in plaintext because nobody configured the keys.
  if (!processRing) throw new Error('no data keys configured: call useDataKeys(config.dataKeys) at start');
  return processRing;
}

/** Seals with the process's keys. */
export function sealSecret(plaintext: string): string {
  return seal(ringOrFail(), plaintext);
}

/** Opens with the process's keys (plaintext legacy values pass through). */
export function openSecret(stored: string): string {
  return isSealed(stored) ? open(ringOrFail(), stored) : stored;
}

/** The process's key ring (the rotation reads its current key). */
export function processDataKeys(): DataKeyRing {
  return ringOrFail();
}
