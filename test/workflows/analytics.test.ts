import { expect } from 'chai';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { systemClock } from '../../activities';
import { newId } from '../../db/ids';
import { Call } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';
import { eventIdFor } from '../../domain/webhooks/ids';
import { createAgent } from '../../domain/agents/store';
import { settingsFromInput, type AgentInput } from '../../domain/agents/settings';
import { OpenAiCompatibleLanguageModel } from '../../providers/llm/openai-compatible';
import { defaultRespond, startLanguageModelSimulator, type ChatCompletionRequestBody, type LanguageModelSimulator } from '../../simulators/llm/simulator';
import { createWorkers } from '../../workers/bootstrap';
import type { analyticsWorkflow } from '../../workflows/analytics';
import { analyticsWorkflowId, type AnalyticsResult } from '../../contracts/analytics';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { createLocal, timeSkippingWorker, workflowBundle } from '../support/servers';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const ENDED_AT = new Date('2025-03-10T09:31:40.000Z');
const TRANSCRIPT = [
  { role: 'assistant', text: 'Namaste, this is Asha from Sunrise Clinic. How can I help?', at: new Date('2025-03-10T09:30:00.000Z'), interrupted: false },
  {
    role: 'user',
    text: 'I need an appointment for my knee on March 14th, it hurts and is swollen.',
    at: new Date('2025-03-10T09:30:06.500Z'),
    interrupted: false,
  },
  { role: 'assistant', text: 'Booked with orthopedics on March 14th at 10 am. Anything else?', at: new Date('2025-03-10T09:30:15.000Z'), interrupted: true },
  { role: 'user', text: 'No, that is all. Goodbye.', at: new Date('2025-03-10T09:30:20.000Z'), interrupted: false },
];
const TRANSCRIPT_TEXT = TRANSCRIPT.map((t) => `${t.role}: ${t.text}`).join('\n');

const EXTRACTIONS = [
  { key: 'patient_name', label: 'Patient name', type: 'text', description: 'Full name of the caller' },
  { key: 'visits', type: 'number', description: 'Visits so far' },
  { key: 'age', type: 'number' },
  { key: 'wants_callback', type: 'boolean', description: 'Caller asked to be called back' },
  { key: 'insured', type: 'boolean' },
  {
    key: 'department',
    type: 'choice',
    choices: [
      { value: 'Orthopedics', when: 'bones, joints or muscles' },
      { value: 'Cardiology', when: 'the heart' },
    ],
  },
  { key: 'urgency', type: 'choice', choices: [{ value: 'low' }, { value: 'high', when: 'pain that stops daily life' }] },
  { key: 'visit_date', type: 'date', description: 'Day of the booked visit' },
  { key: 'follow_up', type: 'date' },
  { key: 'symptoms', type: 'list', description: 'Each symptom named' },
  { key: 'notes', type: 'text' },
] as const;
const EXTRACTION_PROMPT = 'Read dates relative to 10 March 2025. Mark urgency high only when the caller says so.';

/** What the scripted model answers for the extractions: good values, values to coerce, bad values, one missing and one unknown key. */
const MODEL_EXTRACTION = {
  patient_name: '  Ravi Kumar ',
  visits: '42',
  age: 'abc',
  wants_callback: 'Yes',
  insured: false,
  department: 'ORTHOPEDICS',
  urgency: 'medium',
  visit_date: '2025-03-14',
  follow_up: '2025-02-30',
  symptoms: ['knee pain', ' swelling ', 3, { deep: true }, ''],
  stray_key: 'not declared',
};
const EXPECTED_EXTRACTED = {
  patient_name: 'Ravi Kumar',
  visits: 42,
  age: null,
  wants_callback: true,
  insured: false,
  department: 'Orthopedics',
  urgency: null,
  visit_date: '2025-03-14',
  follow_up: null,
  symptoms: ['knee pain', 'swelling', '3'],
  notes: null,
};
const SUMMARY = 'Ravi booked an orthopedics visit for his knee on March 14th. He needed nothing else.';

const isJsonRequest = (request: ChatCompletionRequestBody) => request.response_format?.type === 'json_object';
const text = (message: ChatCompletionRequestBody['messages'][number]) => (typeof message.content === 'string' ? message.content : '');
const timeline = (callId: string) => CallEvent.find({ call_id: callId }).sort({ sequence: 1 }).lean();

function modelFor(simulator: LanguageModelSimulator) {
  return () => new OpenAiCompatibleLanguageModel({ baseUrl: simulator.url, apiKey: simulator.apiKey, timeoutMs: 5_000 });
}

type AnalyticsInput = NonNullable<AgentInput['analytics']>;

/** An agent on the `local` provider (the simulator) with these analytics settings. */
async function agentWith(workspaceId: string, options: { analytics: Partial<AnalyticsInput>; webhook_url?: string }) {
  const analytics: AnalyticsInput = { summarize: false, extractions: [], extraction_prompt: '', ...options.analytics };
  const input = { name: 'Asha', llm: { provider: 'local', temperature: 0.3 }, analytics, webhook_url: options.webhook_url } as AgentInput;
  return createAgent(workspaceId, settingsFromInput(input, null), 'test', new Date(), null);
}

/** A connected call that has ended, with its transcript, as the call workflow leaves it. */
async function endedCall(workspaceId: string, agentId: string) {
  const callId = newId();
  await Call.create({
    _id: callId,
    workspace_id: workspaceId,
    agent_id: agentId,
    agent_name: 'Asha',
    direction: 'outbound',
    to_number: '+919812345678',
    from_number: '+918047180001',
    status: 'completed',
    user_data: { name: 'Ravi' },
    placed_by: 'Ravi',
    queued_at: new Date('2025-03-10T09:29:50.000Z'),
    started_at: new Date('2025-03-10T09:29:58.000Z'),
    ended_at: ENDED_AT,
    duration_seconds: 102,
    hangup_by: 'caller',
    hangup_reason: 'the caller hung up',
    transcript: TRANSCRIPT,
    created_at: new Date('2025-03-10T09:29:50.000Z'),
    updated_at: ENDED_AT,
  });
  return callId;
}

async function runAnalytics(env: TestWorkflowEnvironment, input: { callId: string; workspaceId: string; agentId: string; sequence: number }) {
  const handle = await env.client.workflow.start<typeof analyticsWorkflow>('analyticsWorkflow', {
    taskQueue: TASK_QUEUES.analytics,
    workflowId: analyticsWorkflowId(input.callId),
    args: [input],
  });
  return { handle, result: (await handle.result()) as AnalyticsResult };
}

/** Exactly one `call.completed` on the call's timeline, at `sequence`; its `data.call`. */
async function completedEvent(callId: string, sequence: number) {
  const events = await timeline(callId);
  expect(events.map((e) => e.type)).to.deep.equal(['call.completed']);
  expect(events[0]).to.include({ _id: eventIdFor(callId, sequence), sequence, level: 'info' });
  return (JSON.parse(events[0].data_json) as { call: Record<string, unknown> }).call;
}

describe('analyticsWorkflow on the dev server', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let llm: LanguageModelSimulator;
  let receiver: WebhookReceiver;
  let workers: Worker[];
  let running: Promise<unknown>;

  before(async () => {
    env = createLocal();
    llm = await startLanguageModelSimulator();
    receiver = await startWebhookReceiver();
    // The `analytics` role as workers/roles.ts defines it, and `webhooks` to deliver call.completed.
    workers = await createWorkers({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      roles: ['analytics', 'webhooks'],
      deps: { clock: systemClock, temporal: env.client, webhooksAllowPrivateNetworks: true, languageModelFor: modelFor(llm) },
      workflows: { workflowBundle: await workflowBundle() },
    });
    running = Promise.all(workers.map((w) => w.run()));
  });
  after(async () => {
    workers.forEach((w) => w.shutdown());
    await running;
    await receiver.close();
    await llm.close();
  });
  beforeEach(() => {
    llm.respond = defaultRespond;
    llm.mode = 'normal';
  });

  it('saves a summary and the extractions coerced to their types, then sends call.completed once with the full record', async () => {
    const workspaceId = newId();
    const agent = await agentWith(workspaceId, {
      webhook_url: `${receiver.url}/agent-hook`,
      analytics: { summarize: true, extractions: EXTRACTIONS as unknown as AnalyticsInput['extractions'], extraction_prompt: EXTRACTION_PROMPT },
    });
    const callId = await endedCall(workspaceId, agent._id);
    llm.respond = (request) => ({ text: isJsonRequest(request) ? JSON.stringify(MODEL_EXTRACTION) : SUMMARY });
    const seen = llm.requests.length;

    const { result } = await runAnalytics(env, { callId, workspaceId, agentId: agent._id, sequence: 7 });
    expect(result).to.deep.equal({ summary: SUMMARY, extracted: EXPECTED_EXTRACTED, error: null });

    const record = await Call.findById(callId).lean();
    expect(record).to.deep.include({ summary: SUMMARY, extracted: EXPECTED_EXTRACTED, analytics_error: null });

    // Two requests: the summary in plain text, the extractions as a JSON object; both with the agent's model and the transcript.
    const requests = llm.requests.slice(seen);
    expect(requests).to.have.length(2);
    const summaryRequest = requests.find((r) => !isJsonRequest(r))!;
    const extractionRequest = requests.find(isJsonRequest)!;
    for (const request of [summaryRequest, extractionRequest]) {
      expect(request).to.include({ model: 'local-chat', temperature: 0.3 });
      expect(request.messages.map(text).join('\n')).to.include(TRANSCRIPT_TEXT);
    }
    expect(text(summaryRequest.messages[0])).to.match(/1 to 3 .*sentences/);
    const instructions = text(extractionRequest.messages[0]);
    expect(instructions).to.include(EXTRACTION_PROMPT);
    for (const item of EXTRACTIONS) expect(instructions).to.include(`"${item.key}" (${item.type}`);
    expect(instructions).to.include('Patient name').and.include('Full name of the caller');
    expect(instructions).to.include('"Orthopedics" when bones, joints or muscles').and.include('"high" when pain that stops daily life');

    const call = await completedEvent(callId, 7);
    expect(call).to.deep.include({
      id: callId,
      agent_name: 'Asha',
      direction: 'outbound',
      to_number: '+919812345678',
      status: 'completed',
      user_data: { name: 'Ravi' },
      duration_seconds: 102,
      hangup_by: 'caller',
      hangup_reason: 'the caller hung up',
      summary: SUMMARY,
      extracted: EXPECTED_EXTRACTED,
      transcript_text: TRANSCRIPT_TEXT,
      ended_at: ENDED_AT.toISOString(),
    });
    expect(call.transcript).to.deep.equal(TRANSCRIPT.map((t) => ({ ...t, at: t.at.toISOString() })));

    // The agent's webhook receives the same record, times in UTC.
    const [delivered] = await receiver.waitForRequests(1, 20_000);
    const body = JSON.parse(delivered.rawBody) as { type: string; call_id: string; data: { call: Record<string, unknown> & { transcript: { at: string }[] } } };
    expect(body).to.include({ type: 'call.completed', call_id: callId });
    expect(body.data.call).to.deep.include({
      transcript_text: TRANSCRIPT_TEXT,
      extracted: EXPECTED_EXTRACTED,
      summary: SUMMARY,
      ended_at: '2025-03-10T09:31:40.000+00:00',
    });
    expect(body.data.call.transcript[1].at).to.equal('2025-03-10T09:30:06.500+00:00');
  });

  it('makes no model request when summarize is off and nothing is to be extracted, and still sends call.completed', async () => {
    const workspaceId = newId();
    const agent = await agentWith(workspaceId, { analytics: { summarize: false } });
    const callId = await endedCall(workspaceId, agent._id);
    const seen = llm.requests.length;

    const { result } = await runAnalytics(env, { callId, workspaceId, agentId: agent._id, sequence: 3 });
    expect(result).to.deep.equal({ summary: null, extracted: null, error: null });
    expect(llm.requests.length - seen).to.equal(0);
    const call = await completedEvent(callId, 3);
    expect(call).to.deep.include({ summary: null, extracted: null, transcript_text: TRANSCRIPT_TEXT });
  });

  it('completes the call of a deleted agent without analytics', async () => {
    const workspaceId = newId();
    const callId = await endedCall(workspaceId, newId());
    const seen = llm.requests.length;

    const { result } = await runAnalytics(env, { callId, workspaceId, agentId: newId(), sequence: 5 });
    expect(result).to.deep.equal({ summary: null, extracted: null, error: null });
    expect(llm.requests.length - seen).to.equal(0);
    await completedEvent(callId, 5);
  });

  it('keeps a free-form answer when only an extraction_prompt is set, dropping keys the store refuses', async () => {
    const workspaceId = newId();
    const agent = await agentWith(workspaceId, { analytics: { summarize: false, extraction_prompt: 'Give {"reason": string, "follow": {"day": string}}.' } });
    const callId = await endedCall(workspaceId, agent._id);
    llm.respond = () => ({ text: JSON.stringify({ reason: 'knee pain', follow: { day: 'Friday', $bad: 1 }, 'a.b': 2 }) });

    const { result } = await runAnalytics(env, { callId, workspaceId, agentId: agent._id, sequence: 2 });
    expect(result.extracted).to.deep.equal({ reason: 'knee pain', follow: { day: 'Friday' } });
    expect((await Call.findById(callId).lean())?.extracted).to.deep.equal({ reason: 'knee pain', follow: { day: 'Friday' } });
  });
});

/** The retry backoff (2 s, 4 s, 8 s, 16 s) on the time-skipping server. */
describe('analyticsWorkflow retries under time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let stack: Awaited<ReturnType<typeof timeSkippingWorker>>;
  let llm: LanguageModelSimulator;

  before(async () => {
    llm = await startLanguageModelSimulator();
    stack = await timeSkippingWorker(TASK_QUEUES.analytics, { languageModelFor: modelFor(llm) });
    env = stack.env;
  });
  after(async () => {
    await stack.stop();
    await llm.close();
  });
  beforeEach(() => {
    llm.respond = defaultRespond;
    llm.mode = 'normal';
  });

  const summarizingAgent = (workspaceId: string) =>
    agentWith(workspaceId, { analytics: { summarize: true, extractions: [{ key: 'visits', type: 'number' }] } });

  it('retries a failing model five times with backoff, then completes the call with analytics_error and one call.completed', async () => {
    const workspaceId = newId();
    const agent = await summarizingAgent(workspaceId);
    const callId = await endedCall(workspaceId, agent._id);
    llm.respond = () => {
      throw new Error('model overloaded');
    };
    const seen = llm.requests.length;

    const { handle, result } = await runAnalytics(env, { callId, workspaceId, agentId: agent._id, sequence: 9 });
    expect(result.summary).to.equal(null);
    expect(result.extracted).to.equal(null);
    expect(result.error).to.match(/^the language model did not answer: answered 500: .*model overloaded/);
    // Five attempts, each asking for the summary and the extractions.
    expect(llm.requests.length - seen).to.equal(10);

    const record = await Call.findById(callId).lean();
    expect(record).to.deep.include({ analytics_error: result.error, summary: null, extracted: null });
    const call = await completedEvent(callId, 9);
    expect(call).to.deep.include({ transcript_text: TRANSCRIPT_TEXT, summary: null, status: 'completed' });

    // The history keeps the last attempt (the fifth), which failed at least 2 + 4 + 8 + 16 s of (skipped) time after the first was scheduled.
    const events = (await handle.fetchHistory()).events ?? [];
    const eventSeconds = (event: (typeof events)[number] | undefined) => Number(event?.eventTime?.seconds ?? 0);
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'analyzeCall');
    const started = events.find(
      (e) => e.activityTaskStartedEventAttributes && String(e.activityTaskStartedEventAttributes.scheduledEventId) === String(scheduled?.eventId),
    );
    const failed = events.find((e) => e.activityTaskFailedEventAttributes);
    expect(started?.activityTaskStartedEventAttributes?.attempt).to.equal(5);
    expect(eventSeconds(failed) - eventSeconds(scheduled)).to.be.at.least(30);
  });

  it('retries an extraction answer that is not JSON, and saves the next valid one', async () => {
    const workspaceId = newId();
    const agent = await agentWith(workspaceId, { analytics: { summarize: false, extractions: [{ key: 'visits', type: 'number' }] } });
    const callId = await endedCall(workspaceId, agent._id);
    let answers = 0;
    llm.respond = () => ({ text: ++answers <= 2 ? 'visits: 3' : '{"visits": "3"}' });

    const { result } = await runAnalytics(env, { callId, workspaceId, agentId: agent._id, sequence: 4 });
    expect(answers).to.equal(3);
    expect(result).to.deep.equal({ summary: null, extracted: { visits: 3 }, error: null });
    expect(await Call.findById(callId).lean()).to.deep.include({ extracted: { visits: 3 }, analytics_error: null });
    await completedEvent(callId, 4);
  });
});
