import { payloadKeysEnv, type PayloadKeysConfig } from '../../config/env';
import { payloadEncryption } from '../../domain/shared/payload-encryption';

/**
 * The tests' Temporal payload key (docs/decisions/0200): fixed, so that the histories recorded
 * encrypted (test/fixtures/histories/*-encrypted.json) replay with it. Known to everyone, so it
 * protects nothing: never use it outside tests.
 */
export const TEST_PAYLOAD_KEYS: PayloadKeysConfig = {
  currentKeyId: 'test-1',
  keys: [{ id: 'test-1', key: Buffer.from('IEAJkJEHib38iVQVMzyotiRWecjea9YED4LQ9UvLoC8=', 'base64') }],
};

/** The encryption every test client and worker carries (on the test servers' connections). */
export const testEncryption = payloadEncryption(TEST_PAYLOAD_KEYS);

/** The same key as the variables of a process a test starts (media service, cluster nodes, workers). */
export const TEST_PAYLOAD_KEYS_ENV = payloadKeysEnv(TEST_PAYLOAD_KEYS);
