import { expect } from 'chai';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowHandle } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createActivities, systemClock } from '../../activities';
import { newId } from '../../db/ids';
import { Call } from '../../db/models/call';
import { registerMediaNode } from '../../domain/calls/media-nodes';
import { CallEvent } from '../../db/models/call-event';
import { Workspace } from '../../db/models/workspace';
import { appendLedgerItem } from '../../domain/billing/ledger';
import { createAgent } from '../../domain/agents/store';
import { settingsFromInput } from '../../domain/agents/settings';
import type { AgentInput } from '../../domain/agents/settings';
import { callWorkflowId, providerStatusSignal, QUEUE_EXPIRY_MS, type CallState, type CallWorkflowInput, type MediaNodeChoice } from '../../contracts/calls';
import { slotKeeperId, tryAcquireUpdate } from '../../contracts/slots';
import { TASK_QUEUES } from '../../contracts/task-queues';
import type { ConversationActivities, ConversationInput, ConversationOutcome } from '../../contracts/conversation';
import { PlivoTelephony } from '../../providers/telephony/plivo';
import { randomNumbers, startTestProviders, type TestProviders } from '../support/providers';
import { timeSkippingWorker, workflowBundle } from '../support/servers';
import { until } from '../support/until';
import { testEncryption } from '../support/payload-keys';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const HOUR_MS = 3_600_000;

async function workspace(options: { balancePaise: number; limit?: number; indiaCallingHours?: boolean }) {
  const id = newId();
  const at = new Date();
  const compliance = options.indiaCallingHours === undefined ? {} : { compliance: { india_calling_hours: options.indiaCallingHours } };
  await Workspace.create({
    _id: id,
    name: 'Queue tests',
    status: 'active',
    created_by: 'test',
    concurrency_limit: options.limit ?? null,
    ...compliance,
    created_at: at,
    updated_at: at,
  });
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
  await Call.create({
    _id: callId,
    workspace_id: workspaceId,
    agent_id: agentId,
    agent_name: 'Asha',
    direction: 'outbound',
    to_number: numbers.to,
    from_number: numbers.from,
    status: 'queued',
    placed_by: 'Ravi',
    queued_at: queuedAt,
    created_at: queuedAt,
    updated_at: queuedAt,
  });
  const input: CallWorkflowInput = {
    callId,
    workspaceId,
    agentId,
    direction: 'outbound',
    queuedAt: queuedAt.toISOString(),
    placedBy: 'Ravi',
    toNumber: numbers.to,
    fromNumber: numbers.from,
    valueKeys: [],
  };
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
  after(() => stack?.stop());

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

  /** The next 22:00 in Kolkata (UTC+05:30: 16:30 UTC) on the test server's clock, skipped to. */
  async function skipTo2200Ist(): Promise<void> {
    const now = await env.currentTimeMs();
    const today1630 = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate(), 16, 30);
    await env.sleep((today1630 > now ? today1630 : today1630 + 24 * HOUR_MS) - now);
  }

  const dequeuedAfter = async ({ callId, queuedAt }: { callId: string; queuedAt: Date }) => {
    const dequeued = (await timeline(callId)).find((e) => e.type === 'call.dequeued')!;
    return { ms: dequeued.created_at.getTime() - queuedAt.getTime(), utcMinute: dequeued.created_at.getUTCHours() * 60 + dequeued.created_at.getUTCMinutes() };
  };
  const allDay = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };

  // Each call here is placed and awaited on its own: several calls in flight while the test
  // server skips 11 hours have been seen to stall its clock (its time lock and our local
  // activities), and the question is each call's own wait, not how they interleave.
  it("keeps India's calling hours for +91 numbers when the workspace does (0207): placed at 22:00 IST with the agent's hours open all day, dialled at 09:00 IST", async () => {
    const kept = await workspace({ balancePaise: 50_000, indiaCallingHours: true });
    const agent = await agentIn(kept, allDay);
    await skipTo2200Ist();
    const indian = await placeCall(env, kept, agent._id, { to: '+919812345678', from: '+918047180001' });
    await indian.handle.result();
    const waited = await dequeuedAfter(indian);
    expect(waited.ms).to.be.within(11 * HOUR_MS - 60_000, 11 * HOUR_MS + 5_000);
    expect(waited.utcMinute).to.equal(3 * 60 + 30);
  });

  it("dials at once at 22:00 IST a number abroad from a workspace keeping India's hours, and a +91 number from one that does not (0207)", async () => {
    const kept = await workspace({ balancePaise: 50_000, indiaCallingHours: true });
    const notKept = await workspace({ balancePaise: 50_000 });
    const [keptAgent, otherAgent] = await Promise.all([agentIn(kept, allDay), agentIn(notKept, allDay)]);
    await skipTo2200Ist();
    const abroad = await placeCall(env, kept, keptAgent._id, { to: '+14155550123', from: '+918047180001' });
    await abroad.handle.result();
    expect((await dequeuedAfter(abroad)).ms).to.be.below(60_000);
    const elsewhere = await placeCall(env, notKept, otherAgent._id, { to: '+919812345679', from: '+918047180001' });
    await elsewhere.handle.result();
    expect((await dequeuedAfter(elsewhere)).ms).to.be.below(60_000);
  });

  it('cancels a call still queued after 24 hours with "expired in queue" (every slot busy)', async () => {
    const ws = await workspace({ balancePaise: 50_000, limit: 1 });
    const agent = await agentIn(ws, { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' });
    // An inbound call holds the only slot for the whole test (a running workflow, so the keeper's
    // check for slots of ended calls leaves it alone).
    const holder = newId();
    await env.client.workflow.start('slotProbeWorkflow', {
      taskQueue: TASK_QUEUES.calls,
      workflowId: callWorkflowId(holder),
      args: [{ workspaceId: ws, callId: holder }],
    });
    const keeper = await env.client.workflow.signalWithStart('slotKeeperWorkflow', {
      taskQueue: TASK_QUEUES.calls,
      workflowId: slotKeeperId(ws),
      args: [{ workspaceId: ws }],
      signal: 'release',
      signalArgs: [{ callId: 'nobody' }],
    });
    const acquired = await keeper.executeUpdate(tryAcquireUpdate, { args: [{ callId: holder, channel: 'inbound' }] });
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
    // It left the keeper's queue too: a slot freed later is not handed to a call that is over.
    const keeperState = (await keeper.query('state')) as { queue: { callId: string }[]; active: { callId: string }[] };
    expect(keeperState.queue.map((c) => c.callId)).to.deep.equal([]);
    expect(keeperState.active.map((c) => c.callId)).to.deep.equal([holder]);
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

/**
 * The call workflow's own deadline in the live phase, with the plivo-style adapter against its
 * simulator (no callback route: the test relays the provider's statuses, so the provider
 * "never ends" a call unless the test says so) and media workers that misbehave.
 *
 * The test server stops skipping time while an activity is scheduled or running (it locks
 * its clock for every scheduled activity task), and the live phase always has the
 * conversation activity on the `media` queue: these tests run in real time, with a short
 * `max_duration_seconds` (5 s, below the API's minimum, written through the store). The
 * simulator runs 10 times slower, so that its own time limit (Plivo's `time_limit`, the
 * agent's max duration) never ends a call before the workflow does.
 */
describe('callWorkflow cap on a live call (the media service absent or misbehaving)', function () {
  this.timeout(120_000);
  const MAX_DURATION_SECONDS = 5;
  /** workflows/call.ts: CAP_GRACE_MS, CONVERSATION_HEARTBEAT_TIMEOUT_MS, CONVERSATION_STOP_WAIT_MS. */
  const CAP_GRACE_SECONDS = 15;
  const HEARTBEAT_TIMEOUT_SECONDS = 5;
  const STOP_WAIT_SECONDS = 10;
  let env: TestWorkflowEnvironment;
  let stack: Awaited<ReturnType<typeof timeSkippingWorker>>;
  let analytics: { worker: Worker; running: Promise<void> };
  let providers: TestProviders;
  let callbacks: WebhookReceiver;

  /** A worker on the `media` queue (or a chosen node's own) running `runConversation` as given; stop() shuts it down. */
  async function mediaWorker(
    runConversation: ConversationActivities['runConversation'],
    taskQueue: string = TASK_QUEUES.media,
  ): Promise<{ stop(): Promise<void> }> {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      activities: { runConversation },
      shutdownGraceTime: '1 second',
    });
    const running = worker.run();
    return {
      async stop() {
        worker.shutdown();
        await running;
      },
    };
  }

  /** A call that the provider answered (relayed as `in-progress`); the workflow is now live. */
  async function liveCall(ws: string, mediaNode?: MediaNodeChoice) {
    const agent = await agentIn(ws, { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC', max_duration_seconds: MAX_DURATION_SECONDS });
    const to = randomNumbers(1)[0]!.replace('+9180', '+9198');
    providers.telephony.setCallee(to, { kind: 'answer', answerAfterSeconds: 0 });
    const { callId, handle } = await placeCall(env, ws, agent._id, { to, from: providers.pool[0]! });
    const dialled = await until(
      () => Call.findById(callId).lean(),
      (call) => !!call?.provider_call_id,
      20_000,
    );
    const providerCallId = dialled?.provider_call_id as string;
    expect(providerCallId).to.be.a('string');
    const at = async () => new Date(await env.currentTimeMs()).toISOString();
    await handle.signal(providerStatusSignal, { status: 'in-progress', providerCallId, at: await at(), ...(mediaNode ? { mediaNode } : {}) });
    const simulated = () => providers.telephony.calls().find((c) => c.providerCallId === providerCallId);
    return {
      callId,
      handle,
      liveAt: Date.now(),
      /** Waits until the workflow has hung up at the provider, and relays the provider's final status. */
      async relayHangUp(timeoutMs: number) {
        const status = await until(
          () => Promise.resolve(simulated()?.status),
          (s) => s === 'completed',
          timeoutMs,
        );
        expect(status, 'the workflow hung up at the provider').to.equal('completed');
        const hungUpAt = Date.now();
        await this.relayFinalStatus();
        return hungUpAt;
      },
      /** The provider says the call is over (the callee hung up, or our hang-up went through). */
      async relayFinalStatus() {
        await handle.signal(providerStatusSignal, { status: 'completed', providerCallId, at: await at(), durationSeconds: 0 });
      },
    };
  }

  /** What a stuck conversation answers once the test lets it go (the workflow has moved on by then). */
  const letGo = (input: ConversationInput): ConversationOutcome => {
    const at = new Date().toISOString();
    return {
      endedBy: 'system',
      reason: 'canceled',
      level: 'info',
      startedAt: at,
      endedAt: at,
      usage: { stt_seconds: 0, tts_characters: 0, llm_input_tokens: 0, llm_output_tokens: 0, llm_calls: 0 },
      avgFirstAudioMs: null,
      nextSequence: input.sequenceBase,
    };
  };

  /** The workflow's result, or a failure once `seconds` have passed since `from`. */
  async function resultWithin(handle: WorkflowHandle, from: number, seconds: number): Promise<CallState> {
    const left = from + seconds * 1000 - Date.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the call workflow was still running ${seconds} s after the call went live`)), Math.max(0, left));
    });
    try {
      return (await Promise.race([handle.result(), late])) as CallState;
    } finally {
      clearTimeout(timer);
    }
  }

  before(async () => {
    providers = await startTestProviders({ poolSize: 1, timeScale: 10 });
    callbacks = await startWebhookReceiver();
    const { baseUrl, authId, authToken } = providers.config.telephony as { baseUrl: string; authId: string; authToken: string };
    stack = await timeSkippingWorker(TASK_QUEUES.calls, {
      telephony: new PlivoTelephony({ baseUrl, authId, authToken, timeoutMs: 5_000 }),
      telephonyCallbackBaseUrl: callbacks.url,
    });
    env = stack.env;
    // A connected call ends with its post-call analytics (a child workflow on the analytics queue).
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: TASK_QUEUES.analytics,
      workflowBundle: await workflowBundle(),
      activities: createActivities({ clock: systemClock, temporal: env.client, webhooksAllowPrivateNetworks: true }),
    });
    analytics = { worker, running: worker.run() };
  });
  after(async () => {
    analytics?.worker.shutdown();
    await analytics?.running;
    await stack?.stop();
    await callbacks?.close();
    await providers?.close();
  });

  it('no media worker takes the conversation: hangs up at max_duration_seconds + 15 s, then waits for the final status without spinning', async () => {
    const ws = await workspace({ balancePaise: 50_000 });
    const call = await liveCall(ws);
    const hungUpAt = await call.relayHangUp((MAX_DURATION_SECONDS + CAP_GRACE_SECONDS + 10) * 1000);
    expect((hungUpAt - call.liveAt) / 1000).to.be.within(MAX_DURATION_SECONDS + CAP_GRACE_SECONDS - 1, MAX_DURATION_SECONDS + CAP_GRACE_SECONDS + 3);

    const state = await resultWithin(call.handle, call.liveAt, MAX_DURATION_SECONDS + CAP_GRACE_SECONDS + 20);
    expect(state).to.include({ status: 'completed', hangupReason: 'max duration reached' });
    const record = await Call.findById(call.callId).lean();
    expect(record).to.include({ status: 'completed', hangup_by: 'system', hangup_reason: 'max duration reached' });
    const events = (await call.handle.fetchHistory()).events ?? [];
    const timers = events.filter((e) => e.timerStartedEventAttributes).length;
    // The queue wait, the first wait for the provider, and the wait again after `in-progress`.
    expect(timers).to.be.at.most(3);
  });

  it('the media worker takes the conversation and never heartbeats: an error ends the call after the heartbeat timeout', async () => {
    const media = await mediaWorker(async (input) => {
      // Stuck from the start: no heartbeat, no answer (the worker's shutdown lets it go).
      await new Promise<void>((resolve) => Context.current().cancellationSignal.addEventListener('abort', () => resolve()));
      return letGo(input);
    });
    try {
      const ws = await workspace({ balancePaise: 50_000 });
      const call = await liveCall(ws);
      const hungUpAt = await call.relayHangUp(30_000);
      expect((hungUpAt - call.liveAt) / 1000).to.be.within(HEARTBEAT_TIMEOUT_SECONDS - 1, HEARTBEAT_TIMEOUT_SECONDS + 5);
      const state = await resultWithin(call.handle, call.liveAt, HEARTBEAT_TIMEOUT_SECONDS + 20);
      expect(state).to.include({ status: 'completed', hangupReason: 'error' });
      const events = await timeline(call.callId);
      const error = events.find((e) => e.type === 'error');
      expect(error, 'an error event').to.exist;
      expect(error).to.include({ level: 'error' });
      expect(JSON.parse(error!.data_json)).to.deep.equal({ provider: 'media' });
      expect(events.find((e) => e.type === 'call.ended')).to.include({ message: 'ended by system: error', level: 'error' });
    } finally {
      await media.stop();
    }
  });

  /** A chosen node's own queue (docs/decisions/0165): only this test's worker polls it. */
  const chosenNode = (): MediaNodeChoice => ({ url: 'wss://media-test.invalid', taskQueue: `media-node-${newId()}` });
  /** A chosen node that beats in the media node directory until `leave` (its row goes then). */
  async function aliveNode(): Promise<MediaNodeChoice & { leave(): Promise<void> }> {
    const node = chosenNode();
    const registration = await registerMediaNode({ id: newId(), ...node }, () => 0, undefined, 0);
    return { ...node, leave: () => registration.stop() };
  }
  /** What a conversation answers that the agent ended now, live since `liveFrom` (the test server's clock, the workflow's: it skips time). */
  const agentEnded = async (input: ConversationInput, liveFrom: number): Promise<ConversationOutcome> => ({
    ...letGo(input),
    endedBy: 'agent',
    reason: 'the agent ended the call',
    startedAt: new Date(liveFrom).toISOString(),
    endedAt: new Date(await env.currentTimeMs()).toISOString(),
  });
  /** A conversation whose task the node never runs: no beat, no answer, until the worker's shutdown lets it go. */
  const lostTask = async (input: ConversationInput): Promise<ConversationOutcome> => {
    await new Promise<void>((resolve) => Context.current().cancellationSignal.addEventListener('abort', () => resolve()));
    return letGo(input);
  };

  it('on its chosen node, the conversation task that never beat is started again there once: the call goes on and ends as its conversation says (0241)', async () => {
    const node = await aliveNode();
    const inputs: ConversationInput[] = [];
    let liveFrom = 0;
    const media = await mediaWorker(async (input) => {
      inputs.push(input);
      if (inputs.length === 1) {
        // The test server's clock, the workflow's: it skips time.
        liveFrom = await env.currentTimeMs();
        return lostTask(input);
      }
      // The second start: a working node's conversation, beating, which the agent ends 2 s later.
      const context = Context.current();
      const beat = () => context.heartbeat({ phase: 'live', at: Date.now(), liveSince: liveFrom, nextSequence: input.sequenceBase });
      beat();
      const beats = setInterval(beat, 1_000);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      clearInterval(beats);
      return agentEnded(input, liveFrom);
    }, node.taskQueue);
    try {
      const ws = await workspace({ balancePaise: 50_000 });
      const call = await liveCall(ws, node);
      await call.relayHangUp(40_000);
      const state = await resultWithin(call.handle, call.liveAt, 2 * HEARTBEAT_TIMEOUT_SECONDS + 30);
      expect(state).to.include({ status: 'completed', hangupReason: 'the agent ended the call' });
      expect(inputs, 'two starts of the conversation').to.have.length(2);
      // The second waits for the stream only what is left of the first's wait.
      expect(inputs[1]!.streamWaitSeconds).to.be.below(inputs[0]!.streamWaitSeconds);
      const record = await Call.findById(call.callId).lean();
      expect(record).to.include({ status: 'completed', hangup_by: 'agent' });
      expect(record?.duration_seconds, "charged from the stream to the conversation's end").to.be.within(
        HEARTBEAT_TIMEOUT_SECONDS,
        2 * HEARTBEAT_TIMEOUT_SECONDS + 20,
      );
      const events = await timeline(call.callId);
      expect(events.filter((e) => e.type === 'error')).to.deep.equal([]);
      // The history with its second start replays on today's code (no recorded fixture can lose a task).
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), plugins: [testEncryption.plugin] }, await call.handle.fetchHistory());
    } finally {
      await media.stop();
      await node.leave();
    }
  });

  it('the callee hangs up before the lost task is started again: the second start still has the claim grace from its own start (0241)', async () => {
    const node = await aliveNode();
    let starts = 0;
    let liveFrom = 0;
    const media = await mediaWorker(async (input) => {
      starts += 1;
      if (starts === 1) {
        liveFrom = await env.currentTimeMs();
        return lostTask(input);
      }
      // The second start gets to its conversation late (a starved node): 10 s, beating; a cancel meanwhile ends it unclaimed.
      const context = Context.current();
      const beat = () => context.heartbeat({ phase: 'waiting-for-stream', at: Date.now(), liveSince: null, nextSequence: input.sequenceBase });
      beat();
      const beats = setInterval(beat, 1_000);
      const canceled = await new Promise<boolean>((resolve) => {
        const late = setTimeout(() => resolve(false), 10_000);
        context.cancellationSignal.addEventListener('abort', () => {
          clearTimeout(late);
          resolve(true);
        });
      });
      clearInterval(beats);
      if (canceled) return letGo(input);
      return agentEnded(input, liveFrom);
    }, node.taskQueue);
    try {
      const ws = await workspace({ balancePaise: 50_000 });
      const call = await liveCall(ws, node);
      // The callee hangs up a second after the answer: the claim grace (12 s) from then ends before the second start's work.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await call.relayFinalStatus();
      const state = await resultWithin(call.handle, call.liveAt, 2 * HEARTBEAT_TIMEOUT_SECONDS + 40);
      expect(starts).to.equal(2);
      expect(state).to.include({ status: 'completed', hangupReason: 'the agent ended the call' });
      const record = await Call.findById(call.callId).lean();
      expect(record?.duration_seconds, 'charged for the conversation the second start found').to.be.above(0);
    } finally {
      await media.stop();
      await node.leave();
    }
  });

  it('on its chosen node, the media worker takes the conversation twice and never beats: an error ends the call after the second heartbeat timeout', async () => {
    const node = await aliveNode();
    let starts = 0;
    const media = await mediaWorker(async (input) => {
      starts += 1;
      return lostTask(input);
    }, node.taskQueue);
    try {
      const ws = await workspace({ balancePaise: 50_000 });
      const call = await liveCall(ws, node);
      const hungUpAt = await call.relayHangUp(40_000);
      // Two heartbeat timeouts, and the workflow tasks between them.
      expect((hungUpAt - call.liveAt) / 1000).to.be.within(2 * HEARTBEAT_TIMEOUT_SECONDS - 1, 2 * HEARTBEAT_TIMEOUT_SECONDS + 8);
      expect(starts, 'started once again, not more').to.equal(2);
      const state = await resultWithin(call.handle, call.liveAt, 2 * HEARTBEAT_TIMEOUT_SECONDS + 25);
      expect(state).to.include({ status: 'completed', hangupReason: 'error' });
      const events = await timeline(call.callId);
      expect(events.find((e) => e.type === 'call.ended')).to.include({ message: 'ended by system: error', level: 'error' });
    } finally {
      await media.stop();
      await node.leave();
    }
  });

  it('the chosen node is gone from the directory and never takes the task: an error ends the call after the start timeout, with no second start (0241)', async () => {
    const node = chosenNode();
    const ws = await workspace({ balancePaise: 50_000 });
    const call = await liveCall(ws, node);
    await call.relayHangUp(40_000);
    const state = await resultWithin(call.handle, call.liveAt, 40);
    expect(state).to.include({ status: 'completed', hangupReason: 'error' });
    const events = (await call.handle.fetchHistory()).events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runConversation');
    expect(scheduled, 'conversation starts').to.have.length(1);
    const timedOut = events.find((e) => e.activityTaskTimedOutEventAttributes)?.activityTaskTimedOutEventAttributes;
    expect(timedOut?.failure?.timeoutFailureInfo?.timeoutType, 'never taken').to.equal(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START);
    expect((await timeline(call.callId)).find((e) => e.type === 'error')?.message).to.contain('the conversation stopped');
  });

  it('a chosen node alive in the directory that does not take the task in time: started again there, the call goes on (0241)', async () => {
    const node = await aliveNode();
    let media: { stop(): Promise<void> } | null = null;
    try {
      const ws = await workspace({ balancePaise: 50_000 });
      const call = await liveCall(ws, node);
      const liveFrom = await env.currentTimeMs();
      // Its worker polls only once the first start has timed out unstarted (a starved node).
      const timedOut = await until(
        async () => (await call.handle.fetchHistory()).events ?? [],
        (events) => events.some((e) => e.activityTaskTimedOutEventAttributes),
        30_000,
      );
      expect(timedOut.some((e) => e.activityTaskTimedOutEventAttributes)).to.equal(true);
      media = await mediaWorker((input) => agentEnded(input, liveFrom), node.taskQueue);
      await call.relayHangUp(30_000);
      const state = await resultWithin(call.handle, call.liveAt, 60);
      expect(state).to.include({ status: 'completed', hangupReason: 'the agent ended the call' });
      const record = await Call.findById(call.callId).lean();
      expect(record?.duration_seconds, "charged from the stream to the conversation's end").to.be.above(0);
    } finally {
      await media?.stop();
      await node.leave();
    }
  });

  it('the media worker heartbeats but never ends its conversation: the call still ends by max_duration_seconds + 15 s (+ the stop wait)', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const media = await mediaWorker(async (input) => {
      // Alive but stuck: it beats every second and ignores its cancellation until the test lets it go.
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat({ phase: 'live', at: Date.now(), nextSequence: input.sequenceBase }), 1_000);
      await released;
      clearInterval(beat);
      return letGo(input);
    });
    const ws = await workspace({ balancePaise: 50_000 });
    const call = await liveCall(ws);
    try {
      await call.relayHangUp((MAX_DURATION_SECONDS + CAP_GRACE_SECONDS + 10) * 1000);
      const state = await resultWithin(call.handle, call.liveAt, MAX_DURATION_SECONDS + CAP_GRACE_SECONDS + STOP_WAIT_SECONDS + 5);
      expect(state).to.include({ status: 'completed', hangupReason: 'max duration reached' });
      const record = await Call.findById(call.callId).lean();
      expect(record).to.include({ status: 'completed', hangup_by: 'system' });
      expect(record?.duration_seconds).to.be.at.most(MAX_DURATION_SECONDS + CAP_GRACE_SECONDS + 3);
    } finally {
      release();
      await call.handle.terminate('test over').catch(() => undefined);
      await media.stop();
    }
  });
});
