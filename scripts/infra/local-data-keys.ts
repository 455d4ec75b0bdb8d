import fs from 'node:fs';
import path from 'node:path';
import { newDataKey } from '../../contracts/secret-box';

/** The file in the launcher's data folder that keeps the local master key (DATA_KEYS form). */
export const LOCAL_DATA_KEYS_FILE = 'data-keys';

/**
 * The DATA_KEYS of a local stack (`npm start`): made once in `dataDir`, readable by its owner
 * alone (0600), and reused by every later start, so what one run encrypted the next one reads.
 * Losing the file loses the stored secrets with it, as losing a production key would.
 */
export function localDataKeys(dataDir: string): string {
  const file = path.join(dataDir, LOCAL_DATA_KEYS_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    // `wx`: never overwrite a key another start made meanwhile.
    fs.writeFileSync(file, `local:${newDataKey()}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return fs.readFileSync(file, 'utf8').trim();
}
