import { expect } from 'chai';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { newId } from '../../activities/db/ids';
import { Call } from '../../activities/db/models/call';
import { CallEvent } from '../../activities/db/models/call-event';
import { Workspace } from '../../activities/db/models/workspace';
import { appendLedgerItem } from '../../activities/ledger';
import { createAgent } from '../../api/agents/store';
import { settingsFromInput } from '../../api/agents/settings';
import type { AgentInput } from '../../api/agents/settings';
import { callWorkflowId, providerStatusSignal, QUEUE_EXPIRY_MS, type CallState, type CallWorkflowInput } from '../../workflows/shared/calls';
import { slotKeeperId, tryAcquireUpdate } from '../../workflows/shared/slots';
import { TASK_QUEUES } from '../../workflows/shared/task-queues';
import { PlivoTelephony } from '../../media/providers/telephony/plivo';
import { startTestProviders, type TestProviders } from '../support/providers';
import { timeSkippingWorker } from '../support/servers';
import { until } from '../support/until';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const HOUR_MS = 3_600_000;

async function workspace(options: { balancePaise: number; limit?: number }) {
  const id = newId();
  const at = new Date();
  await Workspace.create({ _id: id, name: 'Queue tests', status: 'active', created_by: 'test', concurrency_limit: options.limit ?? null, created_at: at, updated_at: at });
  if (options.balancePaise) await appendLedgerItem({ workspaceId: id, kind: 'grant', amountPaise: options.balancePaise, idempotencyKey: `grant-${id}`, at });
  return id;
}

/** An agent with the API's defaults and these call settings. */
async function agentIn(workspaceId: string, call: { call_start_hour: number; call_end_hour: number; timezone: string; max_duration_seconds?: number }) {
  const input = { name: 'Asha', call } as unknown as AgentInput;
  return createAgent(workspaceId, settingsFromInput(input, null), 'test', new Date(), null);
}

/** A call record and its workflow, placed at the test server's current time. */
async function placeCall(env: TestWorkflowEnvironment, workspaceId: string, agentId: string, numbers = { to: '+919812345678', from: '+918047180001' }) {
  const queuedAt = new Date(await env.currentTimeMs());
  const callId = newId();
  await Call.create({ _id: callId, workspace_id: workspaceId, agent_id: agentId, agent_name: 'Asha', direction: 'outbound', to_number: numbers.to, from_number: numbers.from, status: 'queued', placed_by: 'Ravi', queued_at: queuedAt, created_at: queuedAt, updated_at: queuedAt });
  const input: CallWorkflowInput = { callId, workspaceId, agentId, direction: 'outbound', queuedAt: queuedAt.toISOString(), placedBy: 'Ravi', toNumber: numbers.to, fromNumber: numbers.from, valueKeys: [] };
  const handle = await env.client.workflow.start('callWorkflow', { taskQueue: TASK_QUEUES.calls, workflowId: callWorkflowId(callId), args: [input] });
  return { callId, queuedAt, handle };
}

const timeline = (callId: string) => CallEvent.find({ call_id: callId }).sort({ sequence: 1 }).lean();

/** The call workflow's queue phase on the time-skipping server: calling hours, expiry, credits at the front. */
describe('callWorkflow queue phase under time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let stack: Awaited<ReturnType<typeof timeSkippingWorker>>;

  before(async () => {
    // No telephony in this worker: a call that reaches the dial ends as refused.
    stack = await timeSkippingWorker(TASK_QUEUES.calls);
    env = stack.env;
  });
  after(() => stack.stop());

  it('dials a call placed at 22:00 in Asia/Kolkata at 09:00 the next day (calling hours 9 to 21)', async () => {
    const ws = await workspace({ balancePaise: 50_000 });
    const agent = await agentIn(ws, { call_start_hour: 9, call_end_hour: 21, timezone: 'Asia/Kolkata' });
    // Skip the server's clock to the next 22:00 in Kolkata (UTC+05:30: 16:30 UTC).
    const now = await env.currentTimeMs();
    const today1630 = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate(), 16, 30);
    const placeAt = today1630 > now ? today1630 : today1630 + 24 * HOUR_MS;
    await env.sleep(placeAt - now);
    const { callId, queuedAt, handle } = await placeCall(env, ws, agent._id);
    expect(queuedAt.getTime() - placeAt).to.be.within(0, 60_000);

    const state = (await handle.result()) as CallState;
    const events = await timeline(callId);
    expect(events.map((e) => e.type)).to.deep.equal(['call.queued', 'call.dequeued', 'call.ended']);
    const dequeued = events[1];
    // 09:00 in Kolkata is 03:30 UTC the next day: 11 hours after 22:00.
    expect(dequeued.created_at.getTime() - queuedAt.getTime()).to.be.within(11 * HOUR_MS - 60_000, 11 * HOUR_MS + 5_000);
    expect(dequeued.created_at.getUTCHours() * 60 + dequeued.created_at.getUTCMinutes()).to.equal(3 * 60 + 30);
    expect(dequeued.latency_ms).to.be.within(11 * HOUR_MS - 60_000, 11 * HOUR_MS + 5_000);
    // No telephony here: the dial is refused and the call fails without a charge.
    expect(state.status).to.equal('failed');
    expect(events[2]).to.include({ level: 'error' });
    expect(events[2].message).to.match(/^dial refused: /);
  });

  it('cancels a call still queued after 24 hours with "expired in queue" (every slot busy)', async () => {
    const ws = await workspace({ balancePaise: 50_000, limit: 1 });
    const agent = await agentIn(ws, { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' });
    // An inbound call holds the only slot for the whole test.
    const keeper = await env.client.workflow.signalWithStart('slotKeeperWorkflow', { taskQueue: TASK_QUEUES.calls, workflowId: slotKeeperId(ws), args: [{ workspaceId: ws }], signal: 'release', signalArgs: [{ callId: 'nobody' }] });
    const acquired = await keeper.executeUpdate(tryAcquireUpdate, { args: [{ callId: newId(), channel: 'inbound' }] });
    expect(acquired.granted).to.equal(true);

    const { callId, queuedAt, handle } = await placeCall(env, ws, agent._id);
    const state = (await handle.result()) as CallState;
    expect(state).to.include({ status: 'canceled', hangupReason: 'expired in queue' });
    const events = await timeline(callId);
    expect(events.map((e) => e.type)).to.deep.equal(['call.queued', 'call.ended']);
    expect(events[1]).to.include({ message: 'expired in queue', level: 'warning' });
    expect(events[1].created_at.getTime() - queuedAt.getTime()).to.be.within(QUEUE_EXPIRY_MS, QUEUE_EXPIRY_MS + 60_000);
    const record = await Call.findById(callId).lean();
    expect(record).to.include({ status: 'canceled', hangup_reason: 'expired in queue', cost_paise: null });
  });

  it('fails a call that reaches the front at a balance of zero with "out of credits" (level error)', async () => {
    const ws = await workspace({ balancePaise: 0 });
    const agent = await agentIn(ws, { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' });
    const { callId, handle } = await placeCall(env, ws, agent._id);
    const state = (await handle.result()) as CallState;
    expect(state).to.include({ status: 'failed', hangupReason: 'out of credits' });
    const events = await timeline(callId);
    expect(events.map((e) => e.type)).to.deep.equal(['call.queued', 'call.ended']);
    expect(events[1]).to.include({ message: 'out of credits', level: 'error' });
    // The slot it was granted went back: the keeper holds nothing.
    const keeper = env.client.workflow.getHandle(slotKeeperId(ws));
    const keeperState = await keeper.query('state');
    expect((keeperState as { active: unknown[] }).active).to.deep.equal([]);
  });
});

/** The call workflow's own cap, with the plivo-style adapter against its simulator (no callback route: the test relays the provider's statuses). */
describe('callWorkflow cap on a live call under time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let stack: Awaited<ReturnType<typeof timeSkippingWorker>>;
  let providers: TestProviders;
  let callbacks: WebhookReceiver;

  before(async () => {
    providers = await startTestProviders({ poolSize: 1 });
    callbacks = await startWebhookReceiver();
    const { baseUrl, authId, authToken } = providers.config.telephony as { baseUrl: string; authId: string; authToken: string };
    stack = await timeSkippingWorker(TASK_QUEUES.calls, { telephony: new PlivoTelephony({ baseUrl, authId, authToken, timeoutMs: 5_000 }), telephonyCallbackBaseUrl: callbacks.url });
    env = stack.env;
  });
  after(async () => {
    await stack.stop();
    await callbacks.close();
    await providers.close();
  });

  it('hangs up a live call the provider never ends at max_duration_seconds + 15 s, then waits for its final status without spinning', async () => {
    const ws = await workspace({ balancePaise: 50_000 });
    const agent = await agentIn(ws, { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC', max_duration_seconds: 30 });
    const to = '+919800012345';
    providers.telephony.setCallee(to, { kind: 'answer', answerAfterSeconds: 0 });
    const { callId, handle } = await placeCall(env, ws, agent._id, { to, from: providers.pool[0] });
    const dialled = await until(() => Call.findById(callId).lean(), (call) => !!call?.provider_call_id, 20_000);
    const providerCallId = dialled?.provider_call_id as string;
    expect(providerCallId).to.be.a('string');
    const at = async () => new Date(await env.currentTimeMs()).toISOString();
    await handle.signal(providerStatusSignal, { status: 'in-progress', providerCallId, at: await at() });

    // Past the cap (30 s + 15 s): the workflow hangs up at the provider itself.
    await env.sleep(50_000);
    await until(() => Promise.resolve(providers.telephony.calls().find((c) => c.providerCallId === providerCallId)?.status), (status) => status === 'completed' || status === 'canceled', 20_000);
    // Time goes on while the provider's final status is late: the workflow must wait, not loop.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await handle.signal(providerStatusSignal, { status: 'completed', providerCallId, at: await at(), durationSeconds: 45 });

    const state = (await handle.result()) as CallState;
    expect(state).to.include({ status: 'completed', hangupReason: 'max duration reached' });
    const record = await Call.findById(callId).lean();
    expect(record).to.include({ status: 'completed', hangup_by: 'system', hangup_reason: 'max duration reached', duration_seconds: 45 });
    const events = (await handle.fetchHistory()).events ?? [];
    const timers = events.filter((e) => e.timerStartedEventAttributes).length;
    // The queue wait, the first wait for the provider, and the wait again after `in-progress`.
    expect(timers).to.be.at.most(3);
  });
});
