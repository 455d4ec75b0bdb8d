import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities, systemClock, type ActivityDeps } from '../../activities';
import { bundleWorkflows, TESTING_WORKFLOWS_PATH } from '../../workers/bootstrap';
import { freePort, requireTool, type ManagedProcess } from '../../scripts/infra/processes';
import { startFerretDb } from '../../scripts/infra/servers';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { SEARCH_ATTRIBUTE_KEYS, searchAttributeRegistrations } from '../../contracts/search-attributes';
import { testEncryption } from './payload-keys';

/**
 * The servers every test shares, started once by the root hook (hooks.ts):
 * - FerretDB on a free port with a temporary data folder (or TEST_MONGODB_URI);
 * - the Temporal dev server through TestWorkflowEnvironment.createLocal with our built
 *   binary as an `existing-path` executable (or TEST_TEMPORAL_ADDRESS).
 * Their connections carry the payload encryption as production's do (the test key): every
 * client and worker made on them encrypts (docs/decisions/0200).
 */
export interface TestServers {
  mongodbUri: string;
  temporal: TestWorkflowEnvironment;
  tempDir: string;
  ferret?: ManagedProcess;
}

let servers: TestServers | undefined;

export function testServers(): TestServers {
  if (!servers) throw new Error('test servers are not started: is test/support/hooks.ts the mocha root hook?');
  return servers;
}

export async function startTestServers(): Promise<TestServers> {
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-test-'));
  const dbName = `test_${process.pid}`;
  let ferret: (ManagedProcess & { uri: (db: string) => string }) | undefined;
  let mongodbUri = process.env.TEST_MONGODB_URI;
  if (!mongodbUri) {
    ferret = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(tempDir, 'ferretdb'),
      fast: true,
      output: { file: path.join(tempDir, 'ferretdb.log') },
    });
    mongodbUri = ferret.uri(dbName);
  }
  const temporal = process.env.TEST_TEMPORAL_ADDRESS
    ? await TestWorkflowEnvironment.createFromExistingServer({ address: process.env.TEST_TEMPORAL_ADDRESS, plugins: [testEncryption.plugin] })
    : await TestWorkflowEnvironment.createLocal({
        plugins: [testEncryption.plugin],
        server: {
          executable: { type: 'existing-path', path: requireTool('temporal') },
          extraArgs: searchAttributeRegistrations(),
          log: { format: 'pretty', level: 'error' },
        },
      });
  servers = { mongodbUri, temporal, tempDir, ferret };
  return servers;
}

export async function stopTestServers(): Promise<void> {
  if (!servers) return;
  const { temporal, ferret, tempDir } = servers;
  servers = undefined;
  await temporal.teardown();
  await ferret?.stop();
  fs.rmSync(tempDir, { recursive: true, force: true });
}

/**
 * A time-skipping environment on Temporal's Java test server (`existing-path`), with our
 * custom search attributes registered as on the dev server.
 */
export async function createTimeSkipping(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    plugins: [testEncryption.plugin],
    server: { executable: { type: 'existing-path', path: requireTool('temporalTestServer') } },
  });
  await registerSearchAttributes(env.connection, env.namespace ?? 'default');
  return env;
}

/** Our custom search attributes, registered on a namespace the dev server did not create itself. */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(SEARCH_ATTRIBUTE_KEYS.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type)!])),
  });
}

/** The shared dev-server environment (for updates, signals and end-to-end tests). */
export function createLocal(): TestWorkflowEnvironment {
  return testServers().temporal;
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The workflow code, bundled once per run and shared by every test's workers. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflows(TESTING_WORKFLOWS_PATH);
  return bundle;
}

/**
 * The time-skipping server with a worker on `taskQueue` running the workflow bundle and every
 * activity (receivers in tests listen on 127.0.0.1; `deps` adds or replaces dependencies, e.g.
 * a telephony adapter); stop() ends both.
 */
export async function timeSkippingWorker(
  taskQueue: string | string[],
  deps: Partial<ActivityDeps> = {},
): Promise<{ env: TestWorkflowEnvironment; stop(): Promise<void> }> {
  const env = await createTimeSkipping();
  const activities = createActivities({ clock: systemClock, temporal: env.client, webhooksAllowPrivateNetworks: true, ...deps });
  const bundle = await workflowBundle();
  // One worker per queue (a call's analytics child runs on its own queue).
  const workers = await Promise.all(
    (Array.isArray(taskQueue) ? taskQueue : [taskQueue]).map((queue) =>
      Worker.create({ connection: env.nativeConnection, taskQueue: queue, workflowBundle: bundle, activities }),
    ),
  );
  const running = Promise.all(workers.map((worker) => worker.run()));
  return {
    env,
    async stop() {
      workers.forEach((worker) => worker.shutdown());
      await running;
      await env.teardown();
    },
  };
}
