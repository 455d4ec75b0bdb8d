/**
 * Records workflow histories for the replay test: `npx tsx test/support/record-histories.ts`.
 * Runs each scenario on a fresh dev server with real workers and writes its history to
 * test/fixtures/histories/. Re-record only when a workflow change is meant to be incompatible.
 *
 * `call-completed-before-status-upserts.json` is not made here: an outbound call recorded end to
 * end (API, simulators, media service) before the call workflow upserted `CallStatus`, kept to
 * prove that the `call-status-search-attribute` patch (workflows/call-progress.ts) still
 * replays such histories. Delete it when that patch is removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectMongo, disconnectMongo } from '../../db/connect';
import { createWorkers } from '../../workers/bootstrap';
import { KycRecord } from '../../db/models/kyc';
import { Workspace } from '../../db/models/workspace';
import { kycReviewWorkflow } from '../../workflows/kyc';
import { roundTripWorkflow } from '../../workflows/roundtrip';
import { workflowIds } from '../../workflows/shared/ids';
import { approveSignal, stateQuery } from '../../workflows/shared/kyc';
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
        save(scenario.name, handle.workflowId, env.address);
      }
      await recordKycReview(env.client);
      save('kyc-review-approved', workflowIds.kyc(KYC_WORKSPACE_ID), env.address);
    });
  } finally {
    await disconnectMongo();
    await stopTestServers();
  }
}

/** The CLI's export is the history JSON format Worker.runReplayHistories reads. */
function save(name: string, workflowId: string, address: string): void {
  const file = path.join(__dirname, '..', 'fixtures', 'histories', `${name}.json`);
  fs.writeFileSync(file, execFileSync(requireTool('temporal'), ['workflow', 'show', '--workflow-id', workflowId, '--address', address, '--output', 'json']));
  console.log(`recorded ${path.relative(process.cwd(), file)}`);
}

const KYC_WORKSPACE_ID = '2'.repeat(32);

/** A KYC review submitted, awaiting review (queried), then approved by a staff signal. */
async function recordKycReview(client: Client): Promise<void> {
  const now = new Date();
  await Workspace.create({ _id: KYC_WORKSPACE_ID, name: 'Recorded', status: 'onboarding', created_by: '3'.repeat(32), created_at: now, updated_at: now });
  await KycRecord.create({ _id: KYC_WORKSPACE_ID, status: 'draft' });
  const handle = await client.workflow.start(kycReviewWorkflow, {
    taskQueue: TASK_QUEUES.ops,
    workflowId: workflowIds.kyc(KYC_WORKSPACE_ID),
    args: [{ workspaceId: KYC_WORKSPACE_ID, submissionId: '4'.repeat(32), submittedBy: { id: '3'.repeat(32), name: 'Recorded Owner' }, ip: null }],
  });
  while ((await handle.query(stateQuery)).status !== 'awaiting_review') await new Promise((r) => setTimeout(r, 100));
  await handle.signal(approveSignal, { by: 'ops@example.com' });
  await handle.result();
}

void main();
