/**
 * Records workflow histories for the replay test: `npx tsx test/support/record-histories.ts`.
 * Runs each scenario on a fresh dev server with real workers and writes its history to
 * test/fixtures/histories/. Re-record only when a workflow change is meant to be incompatible.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectMongo, disconnectMongo } from '../../activities/db/connect';
import { createWorkers } from '../../workers/bootstrap';
import { roundTripWorkflow } from '../../workflows/roundtrip';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';
import { requireTool } from '../../scripts/infra/processes';
import { startTestServers, stopTestServers, workflowBundle } from './servers';

const scenarios = [
  { name: 'roundtrip-no-delay', args: { probeId: '0'.repeat(32), note: 'recorded', delaySeconds: 0 } },
  { name: 'roundtrip-with-timer', args: { probeId: '1'.repeat(32), note: 'recorded', delaySeconds: 1 } },
];

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const servers = await startTestServers();
  await connectMongo(servers.mongodbUri);
  try {
    const env = servers.temporal;
    const [worker] = await createWorkers({ connection: env.nativeConnection, namespace: 'default', roles: ['ops'], workflows: { workflowBundle: await workflowBundle() } });
    await worker.runUntil(async () => {
      for (const scenario of scenarios) {
        const handle = await env.client.workflow.start(roundTripWorkflow, { taskQueue: TASK_QUEUES.ops, workflowId: `roundtrip-${scenario.args.probeId}`, args: [scenario.args] });
        await handle.result();
        const file = path.join(__dirname, '..', 'fixtures', 'histories', `${scenario.name}.json`);
        // The CLI's export is the history JSON format Worker.runReplayHistories reads.
        const json = execFileSync(requireTool('temporal'), ['workflow', 'show', '--workflow-id', handle.workflowId, '--address', env.address, '--output', 'json']);
        fs.writeFileSync(file, json);
        console.log(`recorded ${path.relative(process.cwd(), file)}`);
      }
    });
  } finally {
    await disconnectMongo();
    await stopTestServers();
  }
}

void main();
