import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { payloadKeysConfig, type Config, type PayloadKeysConfig } from '../../config/env';
import { requirePayloadEncryption, type PayloadEncryption } from '../../domain/shared/payload-encryption';
import { ROOT } from './processes';

/**
 * The development stack's Temporal payload key (docs/decisions/0200): made by `npm start` the
 * first time, in the data folder beside Temporal's own database, readable by its owner only
 * (0600), and kept, so that the histories of earlier runs still decrypt. The file holds one
 * `id:base64` pair, TEMPORAL_PAYLOAD_KEYS's format.
 */
export const LOCAL_PAYLOAD_KEY_FILE = 'temporal-payload-key';

export function ensureLocalPayloadKey(dataDir: string): PayloadKeysConfig {
  const file = path.join(dataDir, LOCAL_PAYLOAD_KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  const id = `local-${crypto.randomBytes(4).toString('hex')}`;
  try {
    // `wx`: never replaces a key an earlier run made (its histories need it).
    fs.writeFileSync(file, `${id}:${crypto.randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readLocalPayloadKey(dataDir)!;
}

/** The key `npm start` made in `dataDir`, or null when there is none. */
export function readLocalPayloadKey(dataDir: string): PayloadKeysConfig | null {
  const file = path.join(dataDir, LOCAL_PAYLOAD_KEY_FILE);
  if (!fs.existsSync(file)) return null;
  if (process.platform !== 'win32' && (fs.statSync(file).mode & 0o077) !== 0)
    throw new Error(`${file} is readable by other users; make it private (chmod 600 ${file})`);
  const keys = payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: fs.readFileSync(file, 'utf8').trim() }, false);
  if (!keys) throw new Error(`${file} holds no key; delete it only if no history written with it matters`);
  return keys;
}

/** `npm start`'s data folder (DATA_DIR, default .data/), where its key is kept. */
export function localDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.DATA_DIR || path.join(ROOT, '.data'));
}

/**
 * The encryption of a staff script (KYC decisions, limits): TEMPORAL_PAYLOAD_KEYS, or outside
 * production the key `npm start` keeps, so that the scripts work beside a local stack unchanged.
 */
export function scriptPayloadEncryption(config: Pick<Config, 'env' | 'temporalPayloadKeys'>): PayloadEncryption {
  return requirePayloadEncryption(config.temporalPayloadKeys ?? (config.env === 'production' ? null : readLocalPayloadKey(localDataDir())));
}
