/**
 * `npm run keys:rotate`: seals every stored secret (tools' header values, webhook signing
 * secrets, TOTP secrets) under DATA_KEY_CURRENT, plaintext values stored before encryption
 * included (docs/decisions/0196; README, "Secrets at rest"). Rotation: add the new key to
 * DATA_KEYS, make it DATA_KEY_CURRENT, restart the services, run this; then the old key may go.
 * Uses MONGODB_URI and DATA_KEYS as the services do.
 */
import { loadConfig } from '../config/env';
import { connectMongo, disconnectMongo } from '../db/connect';
import { resealStoredSecrets } from '../db/reseal-secrets';

async function main(): Promise<void> {
  const config = loadConfig();
  await connectMongo(config.mongodbUri);
  try {
    const counts = await resealStoredSecrets(config.dataKeys);
    const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
    for (const [collection, n] of Object.entries(counts)) console.log(`${collection.padEnd(24)} ${n} written`);
    console.log(`every stored secret is under key "${config.dataKeys.current}" (${total} documents written)`);
  } finally {
    await disconnectMongo();
  }
}

main().catch((error: unknown) => {
  console.error(`keys:rotate failed: ${(error as Error).message}`);
  process.exitCode = 1;
});
