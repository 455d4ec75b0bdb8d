import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from '../config/env';
import { connectMongo, disconnectMongo } from '../activities/db/connect';
import { createWorkers } from './bootstrap';
import { parseRoles } from './roles';

/**
 * Worker process entry. `WORKER_ROLES` picks the task queues (comma list, default all), so
 * each role can be scaled out on its own while development runs them in one process.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const roles = parseRoles(process.env.WORKER_ROLES);
  Runtime.install({ logger: new DefaultLogger(config.logLevel.toUpperCase() as 'INFO') });
  await connectMongo(config.mongodbUri);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const workers = await createWorkers({ connection, namespace: config.temporalNamespace, roles });

  // SIGINT/SIGTERM: let each worker finish its tasks (shutdownGraceTime) instead of exiting.
  const shutdown = () => workers.forEach((worker) => worker.shutdown());
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  console.log(`worker polling ${roles.join(', ')} on ${config.temporalAddress}`);
  try {
    await Promise.all(workers.map((worker) => worker.run()));
  } finally {
    await connection.close();
    await disconnectMongo();
  }
}

main().catch((err) => {
  console.error('worker failed:', err);
  process.exitCode = 1;
});
