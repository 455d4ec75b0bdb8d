/**
 * Records workflow histories for the replay test (test/workflows/replay.test.ts):
 *
 *   npx tsx test/support/record-histories.ts                   every history
 *   npx tsx test/support/record-histories.ts call-inbound ...  only these (file names, or their beginnings: `call-`, `webhook-`)
 *
 * Each scenario runs for real, as `npm test` runs it: a fresh FerretDB and Temporal dev server,
 * the API with real workers, the media service, and the simulators of telephony, speech
 * recognition, language model and synthesis (test/support/providers.ts). Payloads are encrypted
 * as in production, with the tests' fixed key (test/support/payload-keys.ts): histories recorded
 * since encryption replay only with it (the replay test installs it); older ones are plaintext. Each history is
 * written to test/fixtures/histories/<name>.json, and replaying it uses the file name as its
 * workflow id. Re-record a history only when a workflow change is meant to be incompatible
 * (with a patch, keep the old history too, as below).
 *
 * The slot keeper's continue-as-new is recorded on a second dev server that suggests it after
 * SLOT_KEEPER_SUGGEST_AFTER events (4,096 by default): both its runs are kept.
 *
 * `call-completed-before-status-upserts.json` is not made here: an outbound call recorded end to
 * end (API, simulators, media service) before the call workflow upserted `CallStatus`, kept to
 * prove that the `call-status-search-attribute` patch (workflows/call-progress.ts) still
 * replays such histories. Delete it when that patch is removed.
 *
 * `call-outbound-store-steps-as-activities.json` and `call-inbound-store-steps-as-activities.json`
 * are not made here either: `call-outbound-completed` and `call-inbound-completed` as recorded
 * before the call's store steps became local activities (the `call-store-steps-local` patch,
 * workflows/call-steps.ts), kept to prove such calls still replay. Delete them with that patch.
 * Likewise `call-outbound-release-before-end.json` and `call-outbound-busy-release-before-end.json`:
 * `call-outbound-completed` and `call-outbound-busy` as recorded when a call gave its slot back
 * before the step that ended its record (the `call-release-after-end` patch); delete them with it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectMongo, disconnectMongo } from '../../db/connect';
import { KycRecord } from '../../db/models/kyc';
import { WebhookDelivery } from '../../db/models/webhook-delivery';
import { Workspace } from '../../db/models/workspace';
import { recordEvent } from '../../domain/webhooks/fan-out';
import { newId } from '../../db/ids';
import { kycReviewWorkflow } from '../../workflows/kyc';
import { roundTripWorkflow } from '../../workflows/roundtrip';
import { workflowIds } from '../../contracts/ids';
import { approveSignal, stateQuery } from '../../contracts/kyc';
import { retryNowUpdate } from '../../contracts/webhooks';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { searchAttributeRegistrations } from '../../contracts/search-attributes';
import { requireTool } from '../../scripts/infra/processes';
import { activeOwner, withJson, type SignedUp } from './accounts';
import { startApi, type RunningApi } from './api';
import { BrowserCallClient } from './browser-call-client';
import { randomNumbers, startTestProviders, type TestProviders } from './providers';
import { startTestServers, stopTestServers } from './servers';
import { until } from './until';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver';
import { storedEndpoint } from './webhooks';
import { createdBatch } from '../api/batches/helpers';
import { payAtGateway, startPaymentGateway } from './payment-gateway';
import { paymentCheckStateQuery } from '../../contracts/payments';

const HISTORIES_DIR = path.join(__dirname, '..', 'fixtures', 'histories');
/** Calling hours open all day, so that queued calls are dialled at once. */
const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
/** The simulator plays callees' scripts 20 times faster (their delays; audio plays in real time). */
const TIME_SCALE = 0.05;
/** Low, so that a few calls make the slot keeper continue as new. */
const SLOT_KEEPER_SUGGEST_AFTER = 30;

/** What the scenarios run against: the dev server, the API and its workers, the simulators. */
interface Stack {
  temporal: TestWorkflowEnvironment;
  api: RunningApi;
  providers: TestProviders;
  owner: SignedUp;
}

interface Scenario {
  /** The histories it writes (file names without `.json`). */
  histories: string[];
  /** `main`: the shared dev server; `continue-as-new`: the one suggesting continue-as-new early. */
  server: 'main' | 'continue-as-new';
  record(stack: Stack): Promise<void>;
}

const scenarios: Scenario[] = [
  {
    histories: ['roundtrip-no-delay', 'roundtrip-with-timer'],
    server: 'main',
    async record({ temporal }) {
      for (const [name, args] of [
        ['roundtrip-no-delay', { probeId: '0'.repeat(32), note: 'recorded', delaySeconds: 0 }],
        ['roundtrip-with-timer', { probeId: '1'.repeat(32), note: 'recorded', delaySeconds: 1 }],
      ] as const) {
        const handle = await temporal.client.workflow.start(roundTripWorkflow, {
          taskQueue: TASK_QUEUES.ops,
          workflowId: `roundtrip-${args.probeId}`,
          args: [args],
        });
        await handle.result();
        save(name, temporal, handle.workflowId);
      }
    },
  },
  {
    histories: ['kyc-review-approved'],
    server: 'main',
    async record({ temporal }) {
      await recordKycReview(temporal.client);
      save('kyc-review-approved', temporal, workflowIds.kyc(KYC_WORKSPACE_ID));
    },
  },
  {
    // As `call-outbound-completed`, under a name of its own: the first call history recorded with
    // its payloads encrypted (docs/decisions/0200), kept so that the replay test proves encrypted
    // histories replay with the codec (and not without it).
    histories: ['call-outbound-completed-encrypted'],
    server: 'main',
    record: (stack) => recordOutboundCompleted(stack, 'call-outbound-completed-encrypted'),
  },
  {
    // Queued, granted a slot by the keeper, dialled, answered; the conversation activity on the
    // media service (a turn), the callee hangs up; charged; the analytics child.
    histories: ['call-outbound-completed'],
    server: 'main',
    record: (stack) => recordOutboundCompleted(stack, 'call-outbound-completed'),
  },
  {
    // Queued, granted, dialled: the callee is busy; the slot goes back.
    histories: ['call-outbound-busy'],
    server: 'main',
    async record(stack) {
      const agentId = await createAgent(stack);
      const callId = await placeCall(stack, agentId, callee(stack, { kind: 'busy' }));
      await expectCallEnded(stack, callId, 'busy');
      save('call-outbound-busy', stack.temporal, workflowIds.call(callId));
    },
  },
  {
    // A caller dials a number of the workspace: admitted live, a turn, the caller hangs up.
    histories: ['call-inbound-completed'],
    server: 'main',
    async record(stack) {
      const { api, providers, owner } = stack;
      // The pool's last number: callerFor() hands out the first ones.
      const number = providers.pool[providers.pool.length - 1];
      const claimed = await api.request('/api/v1/phone-numbers', withJson('POST', { number }, owner.auth));
      if (claimed.status !== 201) throw new Error(`claiming ${number} answered ${claimed.status}: ${await claimed.text()}`);
      await createAgent(stack, { welcome_message: 'Hello from Acme.', phone_number: number });
      const caller = '+919845012345';
      providers.telephony.dialInbound({
        from: caller,
        to: number,
        caller: { conversation: [{ say: 'Where is it?' }, { hangUp: true, afterAgentSilenceMs: 600 }] },
      });
      const listed = async () =>
        (await (await api.request(`/api/v1/calls?direction=inbound&number=${encodeURIComponent(number)}`, { headers: owner.auth })).json()).items as {
          id: string;
        }[];
      const [call] = await until(listed, (items) => items.length > 0);
      if (!call) throw new Error('the inbound call was not recorded');
      await expectCallEnded(stack, call.id, 'completed');
      save('call-inbound-completed', stack.temporal, workflowIds.call(call.id));
    },
  },
  {
    // The page's WebSocket: the welcome, a turn, the page closes (the caller hangs up).
    histories: ['call-browser-completed'],
    server: 'main',
    async record(stack) {
      const agentId = await createAgent(stack, { welcome_message: 'Hello, this is Asha.' });
      const res = await stack.api.request('/api/v1/calls/browser', withJson('POST', { agent_id: agentId }, stack.owner.auth));
      if (res.status !== 201) throw new Error(`POST /calls/browser answered ${res.status}: ${await res.text()}`);
      const { call_id: callId, websocket_url: url } = await res.json();
      const client = await BrowserCallClient.connect(url);
      await client.untilAgentQuiet();
      await client.say('Where is my order?');
      await client.frame((f) => f.event === 'transcript' && f.role === 'assistant' && String(f.text).startsWith('You said'));
      await client.untilAgentQuiet();
      await client.disconnect();
      await expectCallEnded(stack, callId, 'completed');
      save('call-browser-completed', stack.temporal, workflowIds.call(callId));
    },
  },
  {
    // Two contacts: one answers, one is busy (one attempt each); the batch completes.
    histories: ['batch-completed'],
    server: 'main',
    async record(stack) {
      const agentId = await createAgent(stack);
      const numbers = [callee(stack, { kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 20 }), callee(stack, { kind: 'busy' })];
      const csv = ['number,name', ...numbers.map((n, i) => `${n},Person ${i}`)].join('\n');
      const from = await stack.providers.callerFor(stack.owner.workspaceId);
      const { batch } = await createdBatch(stack.api, stack.owner.auth, csv, { agent_id: agentId, from_number: from, max_attempts: '1' });
      const state = await stack.temporal.client.workflow.getHandle(workflowIds.batch(batch.id)).result();
      if (state.status !== 'completed') throw new Error(`the batch ended ${JSON.stringify(state)}`);
      save('batch-completed', stack.temporal, workflowIds.batch(batch.id));
    },
  },
  {
    // The target fails the first attempt and takes the automatic retry after its 10 s timer.
    histories: ['webhook-delivery-retried'],
    server: 'main',
    async record(stack) {
      const deliveryId = await webhookToFlakyTarget(stack, 'retried');
      const state = await stack.temporal.client.workflow.getHandle(deliveryId).result();
      if (state.status !== 'delivered' || state.automaticAttempts !== 2) throw new Error(`the delivery ended ${JSON.stringify(state)}`);
      save('webhook-delivery-retried', stack.temporal, deliveryId);
    },
  },
  {
    // Issue 18: the fan-out beside the webhooks worker marks the first attempt local; the
    // target fails it (a local activity's marker) and takes the automatic retry after 10 s.
    histories: ['webhook-delivery-local-first-attempt'],
    server: 'main',
    async record(stack) {
      const deliveryId = await webhookToFlakyTarget(stack, 'local');
      const handle = stack.temporal.client.workflow.getHandle(deliveryId);
      const state = await handle.result();
      if (state.status !== 'delivered' || state.automaticAttempts !== 2) throw new Error(`the delivery ended ${JSON.stringify(state)}`);
      const events = (await handle.fetchHistory()).events ?? [];
      if (!events.some((event) => event.markerRecordedEventAttributes)) throw new Error('the first attempt was not a local activity');
      save('webhook-delivery-local-first-attempt', stack.temporal, deliveryId);
    },
  },
  {
    // The target fails the first attempt; a manual retry (the retryNow update) during the wait delivers it.
    histories: ['webhook-delivery-manual-retry'],
    server: 'main',
    async record(stack) {
      const deliveryId = await webhookToFlakyTarget(stack, 'manual');
      await until(
        async () => (await WebhookDelivery.findById(deliveryId).lean())?.status,
        (status) => status === 'retrying',
      );
      const handle = stack.temporal.client.workflow.getHandle(deliveryId);
      const result = await handle.executeUpdate(retryNowUpdate);
      if (!result.ok) throw new Error(`the manual retry answered ${JSON.stringify(result)}`);
      const state = await handle.result();
      if (state.status !== 'delivered' || state.automaticAttempts !== 1) throw new Error(`the delivery ended ${JSON.stringify(state)}`);
      save('webhook-delivery-manual-retry', stack.temporal, deliveryId);
    },
  },
  {
    // A top-up whose page never comes back: the order's check finds it open, the customer pays,
    // the next check completes it. Then one the page completes, which signals the check to end.
    histories: ['payment-check-completed', 'payment-check-settled'],
    server: 'main',
    async record({ temporal }) {
      const { gateway, providers } = await startPaymentGateway();
      const api = await startApi({
        temporal: temporal.client,
        workerConnection: temporal.nativeConnection,
        namespace: temporal.namespace ?? 'default',
        workers: ['billing'],
        providers,
        paymentCheckDelaysSeconds: [1, 2, 2, 2],
      });
      try {
        const owner = await activeOwner(api, { name: 'Asha Rao' });
        const headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
        const topup = async () => (await api.request('/api/v1/billing/topup', withJson('POST', { pack_id: 'pack_500' }, headers))).json();
        const unpaid = await topup();
        const check = temporal.client.workflow.getHandle(workflowIds.paymentCheck(unpaid.order_id));
        await until(
          () => check.query(paymentCheckStateQuery),
          (state) => state.checks >= 1,
          10_000,
        );
        await payAtGateway(gateway, unpaid.order_id);
        const completed = await check.result();
        if (completed.outcome !== 'completed_by_check' || completed.checks < 2) throw new Error(`the check ended ${JSON.stringify(completed)}`);
        save('payment-check-completed', temporal, check.workflowId);

        const byPage = await topup();
        const paid = await payAtGateway(gateway, byPage.order_id);
        const res = await api.request(`/api/v1/billing/payments/${byPage.id}/complete`, withJson('POST', paid, headers));
        if (res.status !== 200) throw new Error(`the completion answered ${res.status}: ${await res.text()}`);
        const settledCheck = temporal.client.workflow.getHandle(workflowIds.paymentCheck(byPage.order_id));
        const settled = await settledCheck.result();
        if (settled.outcome !== 'completed_elsewhere' || settled.checks !== 0) throw new Error(`the check ended ${JSON.stringify(settled)}`);
        save('payment-check-settled', temporal, settledCheck.workflowId);
      } finally {
        await api.close();
        await gateway.close();
      }
    },
  },
  {
    // A workspace at limit 1 places busy calls through the API: its keeper queues and grants
    // them one at a time, continues as new (its queue and slots carried), and the new run
    // grants the next call.
    histories: ['slot-keeper-continued-as-new', 'slot-keeper-continued-run'],
    server: 'continue-as-new',
    async record(stack) {
      const { temporal, owner } = stack;
      await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { concurrency_limit: 1 } });
      const agentId = await createAgent(stack);
      const keeper = temporal.client.workflow.getHandle(workflowIds.slots(owner.workspaceId));
      // Three at once: two wait in the keeper's queue.
      const calls = await Promise.all([0, 1, 2].map(() => placeCall(stack, agentId, callee(stack, { kind: 'busy' }))));
      for (const callId of calls) await expectCallEnded(stack, callId, 'busy');
      const firstRunId = (await keeper.describe()).raw.workflowExecutionInfo?.firstRunId;
      if (!firstRunId) throw new Error('the slot keeper has no first run');
      // One more call at a time until the keeper has continued as new.
      for (let i = 0; i < 5 && (await keeper.describe()).runId === firstRunId; i++)
        await expectCallEnded(stack, await placeCall(stack, agentId, callee(stack, { kind: 'busy' })), 'busy');
      const events = (await temporal.client.workflow.getHandle(keeper.workflowId, firstRunId).fetchHistory()).events ?? [];
      const secondRunId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      if (!secondRunId) throw new Error('the slot keeper did not continue as new');
      // The run it continued as grants a call too.
      await expectCallEnded(stack, await placeCall(stack, agentId, callee(stack, { kind: 'busy' })), 'busy');
      await new Promise((resolve) => setTimeout(resolve, 500));
      save('slot-keeper-continued-as-new', temporal, keeper.workflowId, firstRunId);
      save('slot-keeper-continued-run', temporal, keeper.workflowId, secondRunId);
    },
  },
];

async function main(): Promise<void> {
  const asked = process.argv.slice(2);
  const chosen = scenarios.filter((s) => !asked.length || s.histories.some((name) => asked.some((a) => name.startsWith(a))));
  const unknown = asked.filter((a) => !scenarios.some((s) => s.histories.some((name) => name.startsWith(a))));
  if (unknown.length || !chosen.length)
    throw new Error(`no history is named ${unknown.join(', ')}; the histories: ${scenarios.flatMap((s) => s.histories).join(', ')}`);

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const servers = await startTestServers();
  await connectMongo(servers.mongodbUri);
  try {
    for (const server of ['main', 'continue-as-new'] as const) {
      const here = chosen.filter((s) => s.server === server);
      if (!here.length) continue;
      const temporal = server === 'main' ? servers.temporal : await continueAsNewServer();
      const stack = await startStack(temporal);
      try {
        for (const scenario of here) await scenario.record(stack);
      } finally {
        await stack.api.close();
        await stack.providers.close();
        if (server !== 'main') await temporal.teardown();
      }
    }
  } finally {
    await disconnectMongo();
    await stopTestServers();
  }
}

/** A dev server of its own that suggests continue-as-new after SLOT_KEEPER_SUGGEST_AFTER events. */
function continueAsNewServer(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: requireTool('temporal') },
      extraArgs: [...searchAttributeRegistrations(), '--dynamic-config-value', `limit.historyCount.suggestContinueAsNew=${SLOT_KEEPER_SUGGEST_AFTER}`],
      log: { format: 'pretty', level: 'error' },
    },
  });
}

/** The simulators, and the API with every worker role and the media service, on `temporal`. */
async function startStack(temporal: TestWorkflowEnvironment): Promise<Stack> {
  const providers = await startTestProviders({ timeScale: TIME_SCALE });
  const api = await startApi({
    temporal: temporal.client,
    workerConnection: temporal.nativeConnection,
    namespace: temporal.namespace ?? 'default',
    workers: ['ops', 'calls', 'webhooks', 'analytics'],
    providers: providers.config,
    media: true,
  });
  providers.telephony.setInboundUrls({
    answerUrl: `${api.baseUrl}/api/v1/telephony/inbound/answer`,
    hangupUrl: `${api.baseUrl}/api/v1/telephony/inbound/status`,
  });
  const owner = await activeOwner(api, { name: 'Asha Rao' });
  return { temporal, api, providers, owner };
}

/** The CLI's export is the history JSON format Worker.runReplayHistories reads. */
function save(name: string, temporal: TestWorkflowEnvironment, workflowId: string, runId?: string): void {
  const file = path.join(HISTORIES_DIR, `${name}.json`);
  const args = ['workflow', 'show', '--workflow-id', workflowId, ...(runId ? ['--run-id', runId] : []), '--address', temporal.address, '--output', 'json'];
  fs.writeFileSync(file, execFileSync(requireTool('temporal'), args));
  console.log(`recorded ${path.relative(process.cwd(), file)}`);
}

async function createAgent({ api, owner }: Stack, settings: Record<string, unknown> = {}): Promise<string> {
  const res = await api.request(
    '/api/v1/agents',
    withJson('POST', { name: 'Asha', voice: { voice_id: 'meera', language: 'en-IN' }, call: OPEN_HOURS, ...settings }, owner.auth),
  );
  if (res.status !== 201) throw new Error(`POST /agents answered ${res.status}: ${await res.text()}`);
  return (await res.json()).id;
}

/** A fresh callee number that plays `script` when dialled. */
function callee({ providers }: Stack, script: Parameters<TestProviders['telephony']['setCallee']>[1]): string {
  const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9197'));
  providers.telephony.setCallee(number, script);
  return number;
}

async function placeCall(stack: Stack, agentId: string, to: string): Promise<string> {
  const from = await stack.providers.callerFor(stack.owner.workspaceId);
  const res = await stack.api.request('/api/v1/calls', withJson('POST', { agent_id: agentId, to_number: to, from_number: from }, stack.owner.auth));
  if (res.status !== 201) throw new Error(`POST /calls answered ${res.status}: ${await res.text()}`);
  return (await res.json()).id;
}

/** Waits for the call's workflow (and so its analytics child) to end with `status`. */
async function expectCallEnded({ temporal }: Stack, callId: string, status: string): Promise<void> {
  const state = await temporal.client.workflow.getHandle(workflowIds.call(callId)).result();
  if (state.status !== status) throw new Error(`call ${callId} ended ${state.status} (${state.hangupReason}), not ${status}`);
}

let receiver: WebhookReceiver | undefined;

/** An endpoint whose target fails the first attempt and takes the next; answers the delivery's id. */
async function webhookToFlakyTarget({ temporal }: Stack, label: string): Promise<string> {
  receiver ??= await startWebhookReceiver();
  const target = `/${label}/${newId()}`;
  let seen = 0;
  receiver.behave((request) =>
    request.path === target ? { status: ++seen >= 2 ? 200 : 500, body: seen >= 2 ? 'ok' : 'down for maintenance' } : { status: 200 },
  );
  const endpoint = await storedEndpoint({ url: receiver.url + target });
  const event = {
    workspaceId: endpoint.workspaceId,
    callId: newId(),
    agentId: '',
    sequence: 0,
    type: 'call.started',
    message: 'outbound call with Asha',
    level: 'info' as const,
    latencyMs: null,
    data: { channel: 'phone' },
    createdAt: new Date().toISOString(),
  };
  const { deliveryIds } = await recordEvent(event, { temporal: temporal.client, now: () => new Date() });
  if (deliveryIds.length !== 1) throw new Error(`expected one delivery, got ${deliveryIds.length}`);
  return deliveryIds[0];
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

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => receiver?.close());

/** An outbound call answered, a turn, the callee hangs up: its history saved under `name`. */
async function recordOutboundCompleted(stack: Stack, name: string): Promise<void> {
  const agentId = await createAgent(stack, { welcome_message: 'Hello from Acme.' });
  const to = callee(stack, {
    kind: 'answer',
    answerAfterSeconds: 1,
    conversation: [{ say: 'Where is my order?' }, { hangUp: true, afterAgentSilenceMs: 600 }],
  });
  const callId = await placeCall(stack, agentId, to);
  await expectCallEnded(stack, callId, 'completed');
  save(name, stack.temporal, workflowIds.call(callId));
}
