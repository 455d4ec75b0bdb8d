import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectMongo, disconnectMongo } from '../../db/connect';
import { startTestServers, stopTestServers } from './servers';
import { useTestDataKeys } from './data-keys';

/** Mocha root hooks: the real servers for the whole run, then a clean stop (no open handles). */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    // Workers' state changes and workflow logs stay out of the test report unless they warn.
    Runtime.install({ logger: new DefaultLogger('WARN') });
    useTestDataKeys();
    const servers = await startTestServers();
    await connectMongo(servers.mongodbUri);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await disconnectMongo();
    await stopTestServers();
  },
};
