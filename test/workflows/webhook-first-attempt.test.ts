import { expect } from 'chai';
import { Client, type WorkflowStartInput, type WorkflowStartOutput } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { systemClock } from '../../activities';
import { newId } from '../../db/ids';
import { WebhookAttempt } from '../../db/models/webhook-attempt';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { localFirstAttemptsEnabled } from '../../domain/webhooks/first-attempts';
import { recordEvent } from '../../domain/webhooks/fan-out';
import { closeConnectionPools } from '../../providers/net/guarded-request';
import { createWorkers } from '../../workers/bootstrap';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { testServers, workflowBundle } from '../support/servers';
import { until } from '../support/until';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { receiverAccepts, storedEndpoint } from '../support/webhooks';

/**
 * The first attempt's fast path (issue 18): a fan-out in the process of the `webhooks` worker
 * starts the delivery eagerly there, and its first attempt is a local activity, unless the
 * target is slow. On the dev server, with the worker as workers/main.ts builds it.
 */
describe('webhook delivery: the first attempt beside the fan-out', function () {
  this.timeout(60_000);
  let receiver: WebhookReceiver;
  let client: Client;
  let workers: Worker[];
  let running: Promise<unknown>;
  const starts = { eager: 0, all: 0 };
  /** Each started delivery's first attempt: 'local' when the fan-out chose the fast path. */
  const firstAttempts = new Map<string, string | undefined>();

  before(async () => {
    const env = testServers().temporal;
    receiver = await startWebhookReceiver((request) => (request.path.startsWith('/silent') ? { hang: true } : { status: 200 }));
    const interceptors = {
      workflow: [
        {
          async startWithDetails(input: WorkflowStartInput, next: (input: WorkflowStartInput) => Promise<WorkflowStartOutput>) {
            const output = await next(input);
            firstAttempts.set(input.options.workflowId, (input.options.args[0] as { firstAttempt?: string } | undefined)?.firstAttempt);
            starts.all++;
            if (output.eagerlyStarted) starts.eager++;
            return output;
          },
        },
      ],
    };
    // As workers/main.ts: the fan-out's client shares the worker's NativeConnection.
    client = new Client({ connection: env.nativeConnection, namespace: env.namespace ?? 'default', interceptors });
    workers = await createWorkers({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      roles: ['webhooks'],
      deps: { clock: systemClock, temporal: client, webhooksAllowPrivateNetworks: true, webhookTimeoutMs: 1_000 },
      workflows: { workflowBundle: await workflowBundle() },
    });
    running = Promise.all(workers.map((worker) => worker.run()));
  });
  after(async () => {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    closeConnectionPools();
    await receiver.close();
  });

  let sequence = 0;
  const emit = (workspaceId: string) =>
    recordEvent(
      {
        workspaceId,
        callId: newId(),
        agentId: '',
        sequence: sequence++,
        type: 'call.started',
        message: 'outbound call with Asha',
        level: 'info',
        latencyMs: null,
        data: { channel: 'phone' },
        createdAt: new Date().toISOString(),
      },
      { temporal: client, now: () => new Date() },
    );
  const eventNames = async (workflowId: string) =>
    ((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).map((event) =>
      Object.keys(event).find((key) => key.endsWith('EventAttributes')),
    );

  it('delivers in one workflow task, started eagerly, with the attempt a local activity signed with the current secret', async () => {
    const eagerBefore = starts.eager;
    const endpoint = await storedEndpoint({ url: `${receiver.url}/fast/${newId()}` });
    const { deliveryIds } = await emit(endpoint.workspaceId);
    const state = await client.workflow.getHandle(deliveryIds[0]).result();
    expect(state).to.include({ status: 'delivered', attempts: 1 });
    expect(starts.eager - eagerBefore).to.equal(1);

    const events = await eventNames(deliveryIds[0]);
    expect(events.filter((name) => name === 'workflowTaskCompletedEventAttributes')).to.have.length(1);
    expect(events.filter((name) => name === 'markerRecordedEventAttributes')).to.have.length(1);
    expect(events).to.not.include('activityTaskScheduledEventAttributes');

    const [request] = receiver.received.filter((r) => r.headers['x-service-delivery'] === deliveryIds[0]);
    expect(await receiverAccepts(request, endpoint.secret)).to.equal(true);
    const delivery = await WebhookDelivery.findById(deliveryIds[0]).lean();
    expect(delivery).to.include({ status: 'delivered', attempt_count: 1 });
    const attempts = await WebhookAttempt.find({ delivery_id: deliveryIds[0] }).lean();
    expect(attempts.map((a) => a.status_code)).to.deep.equal([200]);
  });

  it('moves a target that gives no answer to ordinary activities: its next delivery does not hold a workflow task while it waits', async () => {
    const endpoint = await storedEndpoint({ url: `${receiver.url}/silent/${newId()}` });
    const first = (await emit(endpoint.workspaceId)).deliveryIds[0];
    const afterFirst = await until(
      () => WebhookDelivery.findById(first).lean(),
      (delivery) => delivery?.attempt_count === 1,
      20_000,
    );
    expect(afterFirst).to.include({ status: 'retrying', attempt_count: 1 });
    // Its first attempt was local (the target was not yet known to be slow) ... (the attempt is
    // counted by the local activity itself, before its workflow task completes and the marker
    // reaches the history: on a busy machine that takes a moment).
    expect(
      await until(
        () => eventNames(first),
        (names) => names.includes('markerRecordedEventAttributes'),
        20_000,
      ),
    ).to.include('markerRecordedEventAttributes');

    // ... the next one's is an activity task on the webhooks queue.
    const second = (await emit(endpoint.workspaceId)).deliveryIds[0];
    await until(
      () => eventNames(second),
      (names) => names.includes('activityTaskScheduledEventAttributes'),
      20_000,
    );
    const history = (await client.workflow.getHandle(second).fetchHistory()).events ?? [];
    expect(history.some((event) => event.markerRecordedEventAttributes)).to.equal(false);
    expect(history.find((event) => event.activityTaskScheduledEventAttributes)?.activityTaskScheduledEventAttributes?.taskQueue?.name).to.equal(
      TASK_QUEUES.webhooks,
    );

    await Promise.all([first, second].map((id) => client.workflow.getHandle(id).cancel()));
  });

  // Last: it stops the workers.
  it('is off once the webhooks worker stopped: a fan-out here then starts ordinary first attempts', async () => {
    // (The first test showed the fast path on while the worker runs.)
    const endpoint = await storedEndpoint({ url: `${receiver.url}/after-stop` });
    expect(localFirstAttemptsEnabled()).to.equal(true);
    workers.forEach((worker) => worker.shutdown());
    await running;
    expect(localFirstAttemptsEnabled()).to.equal(false);
    const after = (await emit(endpoint.workspaceId)).deliveryIds[0];
    expect(firstAttempts.has(after), 'the delivery was started').to.equal(true);
    expect(firstAttempts.get(after)).to.equal(undefined);
    await client.workflow.getHandle(after).terminate('no worker runs in this test any more');
  });
});
