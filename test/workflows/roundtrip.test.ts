import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Probe } from '../../db/models/probe';
import { createWorkers } from '../../workers/bootstrap';
import { roundTripWorkflow } from '../../workflows/roundtrip';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { jsonBody, startApi } from '../support/api';
import { signUp } from '../support/accounts';
import { createTimeSkipping, workflowBundle } from '../support/servers';

describe('roundTripWorkflow under time skipping', () => {
  let env: TestWorkflowEnvironment;
  before(async function () {
    this.timeout(120_000);
    env = await createTimeSkipping();
  });
  after(() => env?.teardown());

  it('waits a full day on a durable timer, then writes the probe to MongoDB', async () => {
    const [worker] = await createWorkers({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      roles: ['ops'],
      workflows: { workflowBundle: await workflowBundle() },
    });
    const probeId = randomBytes(16).toString('hex');
    const realStart = Date.now();
    const { startTime, output } = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(roundTripWorkflow, {
        taskQueue: TASK_QUEUES.ops,
        workflowId: `roundtrip-${probeId}`,
        args: [{ probeId, note: 'timer', delaySeconds: 24 * 60 * 60 }],
      });
      return { startTime: (await handle.describe()).startTime, output: await handle.result() };
    });
    expect(Date.parse(output.timerFiredAt) - startTime.getTime()).to.be.at.least(24 * 60 * 60 * 1000);
    expect(Date.now() - realStart, 'a day of workflow time passes in seconds').to.be.below(60_000);
    const saved = await Probe.findById(probeId).lean();
    expect(saved?.note).to.equal('timer');
    expect(saved?.workflow_id).to.equal(`roundtrip-${probeId}`);
  });

  it('the API accepts the largest delay (30 s) and answers once the timer has fired', async () => {
    const api = await startApi({ temporal: env.client, workers: ['ops'], workerConnection: env.nativeConnection, namespace: env.namespace });
    try {
      const res = await api.request('/api/v1/health/roundtrip?timezone=UTC', jsonBody({ delay_seconds: 30 }, (await signUp(api)).auth));
      expect(res.status).to.equal(200);
      const body = await res.json();
      const description = await env.client.workflow.getHandle(body.workflow_id).describe();
      expect(Date.parse(body.timer_fired_at) - description.startTime.getTime()).to.be.at.least(30_000);
    } finally {
      await api.close();
    }
  });
});
