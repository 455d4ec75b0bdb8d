import { expect } from 'chai';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities, systemClock } from '../../activities';
import { newId } from '../../db/ids';
import { WebhookAttempt } from '../../db/models/webhook-attempt';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { WebhookEndpoint } from '../../db/models/webhook-endpoint';
import { sealSecret } from '../../contracts/secret-box';
import { attemptDelivery } from '../../domain/webhooks/attempts';
import { newWebhookSecret } from '../../domain/webhooks/signing';
import { retryNowUpdate, RETRY_DELAYS_MS, type DeliveryState } from '../../contracts/webhooks';
import { TASK_QUEUES, WEBHOOK_RETRY_QUEUE } from '../../contracts/task-queues';
import { createTimeSkipping, workflowBundle } from '../support/servers';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { receiverAccepts, storedEndpoint } from '../support/webhooks';

const seconds = (duration: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(duration?.seconds ?? 0) + (duration?.nanos ?? 0) / 1e9;
const eventTime = (event: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) => seconds(event.eventTime) * 1000;

/** The delivery schedule on Temporal's time-skipping server: hours of timers in seconds. */
describe('webhookDeliveryWorkflow under time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let receiver: WebhookReceiver;
  let workers: Worker[];
  let activities: ReturnType<typeof createActivities>;
  let running: Promise<unknown>;

  before(async () => {
    env = await createTimeSkipping();
    receiver = await startWebhookReceiver();
    activities = createActivities({ clock: systemClock, temporal: env.client, webhooksAllowPrivateNetworks: true });
    workers = [
      await Worker.create({ connection: env.nativeConnection, taskQueue: TASK_QUEUES.webhooks, workflowBundle: await workflowBundle(), activities }),
      // Automatic retries have their own queue (WEBHOOK_RETRY_QUEUE), as the `webhooks` role serves it.
      await Worker.create({ connection: env.nativeConnection, taskQueue: WEBHOOK_RETRY_QUEUE, activities }),
    ];
    running = Promise.all(workers.map((w) => w.run()));
  });
  after(async () => {
    workers.forEach((w) => w.shutdown());
    await running;
    await receiver.close();
    await env.teardown();
  });

  let sequence = 0;
  const emit = (workspaceId: string, type = 'call.started') =>
    activities.recordEvent({
      workspaceId,
      callId: newId(),
      agentId: '',
      sequence: sequence++,
      type,
      message: 'outbound call with Asha',
      level: 'info',
      latencyMs: null,
      data: { channel: 'phone' },
      createdAt: new Date().toISOString(),
    });

  it('attempts at once, then exactly 10 s, 1 min, 5 min, 30 min and 2 h after each failure, and fails after the sixth', async () => {
    const path = `/always-500/${newId()}`;
    receiver.behave((request) => (request.path === path ? { status: 500, body: 'down for maintenance' } : { status: 200 }));
    const endpoint = await storedEndpoint({ url: receiver.url + path });
    const { deliveryIds } = await emit(endpoint.workspaceId);
    expect(deliveryIds).to.have.length(1);
    const handle = env.client.workflow.getHandle(deliveryIds[0]);
    const state: DeliveryState = await handle.result();
    expect(state).to.include({ status: 'failed', automaticAttempts: 6, attempts: 6 });

    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const timers = events.filter((e) => e.timerStartedEventAttributes).map((e) => seconds(e.timerStartedEventAttributes!.startToFireTimeout) * 1000);
    expect(timers).to.deep.equal([...RETRY_DELAYS_MS]);
    const attemptEvents = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'attemptWebhookDelivery');
    // The first attempt on the workflow's queue, the automatic retries on theirs.
    expect(attemptEvents.map((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name)).to.deep.equal([
      TASK_QUEUES.webhooks,
      ...Array(5).fill(WEBHOOK_RETRY_QUEUE),
    ]);
    const attemptsScheduled = attemptEvents.map(eventTime);
    const attemptsDone = events.filter((e) => e.activityTaskCompletedEventAttributes).map(eventTime);
    expect(attemptsScheduled).to.have.length(6);
    // Each automatic attempt starts when its timer fires, exactly the delay after the previous attempt ended.
    for (let i = 1; i < 6; i++) {
      const gap = attemptsScheduled[i] - attemptsDone[i - 1];
      expect(gap, `attempt ${i + 1}`).to.be.within(RETRY_DELAYS_MS[i - 1], RETRY_DELAYS_MS[i - 1] + 1000);
    }

    const mine = receiver.received.filter((r) => r.path === path);
    expect(mine).to.have.length(6);
    expect(new Set(mine.map((r) => r.headers['x-service-delivery']))).to.deep.equal(new Set([deliveryIds[0]]));
    expect(new Set(mine.map((r) => r.rawBody)).size).to.equal(1);
    const delivery = await WebhookDelivery.findById(deliveryIds[0]).lean();
    expect(delivery).to.include({ status: 'failed', attempt_count: 6, next_attempt_at: null });
    expect(delivery?.last_response).to.include({ status_code: 500, body_excerpt: 'down for maintenance' });
    const attempts = await WebhookAttempt.find({ delivery_id: deliveryIds[0] }).sort({ at: 1 }).lean();
    expect(attempts.map((a) => [a.trigger, a.status_code])).to.deep.equal(Array(6).fill(['automatic', 500]));
  });

  it('stops at the first 2xx: delivered on the third attempt', async () => {
    const path = `/third-time/${newId()}`;
    let seen = 0;
    receiver.behave((request) => (request.path === path ? { status: ++seen >= 3 ? 204 : 503 } : { status: 200 }));
    const endpoint = await storedEndpoint({ url: receiver.url + path });
    const { deliveryIds } = await emit(endpoint.workspaceId);
    const state: DeliveryState = await env.client.workflow.getHandle(deliveryIds[0]).result();
    expect(state).to.include({ status: 'delivered', attempts: 3 });
    const delivery = await WebhookDelivery.findById(deliveryIds[0]).lean();
    expect(delivery).to.include({ status: 'delivered', attempt_count: 3, next_attempt_at: null });
    expect(delivery?.delivered_at).to.be.an.instanceOf(Date);
  });

  it('signs each attempt with the secret current at that attempt: after a rotation, only the new secret verifies', async () => {
    const path = `/rotation/${newId()}`;
    let seen = 0;
    receiver.behave((request) => (request.path === path ? { status: ++seen >= 2 ? 200 : 500 } : { status: 200 }));
    const endpoint = await storedEndpoint({ url: receiver.url + path });
    const { deliveryIds } = await emit(endpoint.workspaceId);
    await receiver.waitForRequests(receiver.received.length + 1);
    const rotated = newWebhookSecret();
    // Stored sealed, as POST /webhooks/{id}/rotate-secret stores it.
    await WebhookEndpoint.updateOne({ _id: endpoint.id }, { $set: { secret: sealSecret(rotated) } });
    const state: DeliveryState = await env.client.workflow.getHandle(deliveryIds[0]).result();
    expect(state.status).to.equal('delivered');
    const [first, second] = receiver.received.filter((r) => r.path === path);
    expect(await receiverAccepts(first, endpoint.secret)).to.equal(true);
    expect(await receiverAccepts(second, endpoint.secret)).to.equal(false);
    expect(await receiverAccepts(second, rotated)).to.equal(true);
  });

  it('takes a manual retry while retrying as one extra attempt that ends the schedule when it succeeds', async () => {
    const path = `/manual/${newId()}`;
    let seen = 0;
    receiver.behave((request) => (request.path === path ? { status: ++seen >= 2 ? 200 : 500 } : { status: 200 }));
    const endpoint = await storedEndpoint({ url: receiver.url + path });
    const { deliveryIds } = await emit(endpoint.workspaceId);
    const handle = env.client.workflow.getHandle(deliveryIds[0]);
    await receiver.waitForRequests(receiver.received.length + 1);
    for (let i = 0; i < 50 && (await WebhookDelivery.findById(deliveryIds[0]).lean())?.status !== 'retrying'; i++) await new Promise((r) => setTimeout(r, 100));
    const result = await handle.executeUpdate(retryNowUpdate);
    expect(result).to.include({ trigger: 'manual', ok: true, status: 'delivered' });
    const state: DeliveryState = await handle.result();
    expect(state).to.include({ status: 'delivered', attempts: 2, automaticAttempts: 1 });
    expect(receiver.received.filter((r) => r.path === path)).to.have.length(2);
  });
});

describe('attemptDelivery', () => {
  it('writes nothing when its run outlived the write deadline: a stale run cannot overwrite the retry that delivered', async () => {
    const receiver = await startWebhookReceiver(() => ({ status: 200 }));
    try {
      const endpoint = await storedEndpoint({ url: `${receiver.url}/late` });
      const deliveryId = `whd_${newId()}`;
      const now = new Date();
      await WebhookDelivery.create({
        _id: deliveryId,
        workspace_id: endpoint.workspaceId,
        target: 'endpoint',
        endpoint_id: endpoint.id,
        url: `${receiver.url}/late`,
        event_id: `evt_${newId()}`,
        event_type: 'call.started',
        request_body: '{}',
        status: 'pending',
        created_at: now,
        updated_at: now,
      });
      const input = {
        deliveryId,
        attemptId: `${deliveryId}:run:1`,
        attemptCount: 1,
        trigger: 'automatic' as const,
        ifFailed: { status: 'retrying' as const, retryInMs: 10_000 },
      };
      const guard = { allowPrivateNetworks: true };
      await attemptDelivery(input, { now: () => new Date(), guard });
      expect((await WebhookDelivery.findById(deliveryId).lean())?.status).to.equal('delivered');

      // The same attempt again, as a stalled first run finishing late: the target now fails, but the run is past its deadline.
      receiver.behave(() => ({ status: 503, delayMs: 50 }));
      let refused: unknown;
      await attemptDelivery(input, { now: () => new Date(), guard, writeDeadlineMs: 10 }).catch((err: unknown) => (refused = err));
      expect(String(refused)).to.match(/write deadline/);
      expect((await WebhookDelivery.findById(deliveryId).lean())?.status).to.equal('delivered');
      expect((await WebhookAttempt.findById(input.attemptId).lean())?.status_code).to.equal(200);
    } finally {
      await receiver.close();
    }
  });
});
