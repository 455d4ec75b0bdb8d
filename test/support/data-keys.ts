import { parseDataKeys, useDataKeys, type DataKeyRing } from '../../contracts/secret-box';

const TEST_KEY = `test:${Buffer.alloc(32, 0x5a).toString('base64')}`;
/** The key the rotation test makes current; every test process can read it, since that test rewrites the shared database. */
export const TEST_NEXT_KEY = `test-next:${Buffer.alloc(32, 0x33).toString('base64')}`;

/** The tests' master keys as the services take them, for the processes that tests start. */
export const TEST_DATA_KEYS_ENV = { DATA_KEYS: `${TEST_KEY},${TEST_NEXT_KEY}`, DATA_KEY_CURRENT: 'test' };

export function testDataKeys(current: 'test' | 'test-next' = 'test'): DataKeyRing {
  return parseDataKeys(TEST_DATA_KEYS_ENV.DATA_KEYS, current);
}

/** Seals and opens this process's stored secrets as a started service would (api/server.ts). */
export function useTestDataKeys(): void {
  useDataKeys(testDataKeys());
}
