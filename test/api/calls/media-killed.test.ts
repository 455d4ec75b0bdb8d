import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { LedgerItem } from '../../../db/models/ledger-item';
import type { CalleeScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, TEST_AUTH_CONFIG, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { startMediaProcess, type RunningMediaProcess } from '../../support/media-process';
import { createLocal, testServers } from '../../support/servers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';
import { contractCallCost } from '../../support/charges';

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
/** How often the conversation activity heartbeats (media/conversation/activity.ts). */
const HEARTBEAT_INTERVAL_MS = 1_000;

type Call = Record<string, unknown> & {
  id: string;
  status: string;
  duration_seconds: number;
  cost_paise: number;
  started_at: string;
  hangup_by: string;
  hangup_reason: string;
};
type TimelineEntry = { type: string; message: string; level: string; data: Record<string, unknown>; at: string };

/**
 * A media process killed in the middle of a call: Temporal's heartbeat timeout notices, the
 * call workflow ends the call with an `error` event, hangs up at the provider, charges only
 * the time up to the last heartbeat and frees the slot. Real API, workers, simulators,
 * FerretDB, Temporal, and the media service as a real child process.
 */
describe('Calls: the media process killed mid-call', function () {
  this.timeout(180_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let media: RunningMediaProcess | null = null;
  let logFile: string;

  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9197'));
    providers.telephony.setCallee(number, script);
    return number;
  };
  const timeline = async (id: string): Promise<TimelineEntry[]> => (await api.request(`/api/v1/calls/${id}/events`, { headers: owner.auth })).json();
  const getCall = async (id: string): Promise<Call> => (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json();
  const simulated = (to: string): SimulatedCall => providers.telephony.calls().find((c) => c.to === to)!;

  before(async () => {
    providers = await startTestProviders({ timeScale: 0.05 });
    // No media service in this process: the child below is the only worker on the media queue.
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await providers.callerFor(owner.workspaceId);
    logFile = path.join(testServers().tempDir, `media-${process.pid}-${Date.now()}.log`);
    const { llm, stt, tts } = providers.config;
    const env = createLocal();
    media = await startMediaProcess({
      mongodbUri: testServers().mongodbUri,
      temporalAddress: env.address,
      namespace: env.namespace ?? 'default',
      authSecret: TEST_AUTH_CONFIG.secret,
      providers: { llm: llm!, stt: stt!, tts: tts! },
      logFile,
    });
  });
  after(async () => {
    await media?.process.stop(2_000);
    await api?.close();
    await providers?.close();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed' && fs.existsSync(logFile)) console.log(`media process output:\n${fs.readFileSync(logFile, 'utf8')}`);
  });

  it('ends the call with an error, charged up to the last heartbeat, the provider call hung up and the slot free', async () => {
    const agent = await agentsClient(api, owner.auth).created({
      name: 'Asha',
      voice: { voice_id: 'meera', language: 'en-IN' },
      welcome_message: 'Hello, this is Asha.',
      call: OPEN_HOURS,
    });
    // A caller with a lot to say: the conversation is still going when the process dies.
    const lines = [
      'Where is my order?',
      'I ordered it last week.',
      'It was a blue shirt.',
      'The order number is four two.',
      'Can you check again?',
      'I am still waiting.',
    ];
    const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: lines.map((say) => ({ say })) });
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agent.id, to_number: to, from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    const placed = (await res.json()) as Call;

    // Live: the caller's first line was heard.
    const live = await until(
      () => timeline(placed.id),
      (events) => events.some((e) => e.type === 'user.turn'),
      60_000,
    );
    expect(live.map((e) => e.type)).to.include('user.turn');
    const startedAt = Date.parse((await getCall(placed.id)).started_at);
    media!.process.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await media!.process.exited).to.equal('SIGKILL');

    // The heartbeat timeout (5 s) ends it within seconds.
    const ended = await until(
      () => timeline(placed.id),
      (events) => events.some((e) => e.type === 'call.ended'),
      20_000,
    );
    const endedIn = Date.now() - killedAt;
    expect(
      ended.map((e) => e.type),
      JSON.stringify(ended.slice(-4)),
    ).to.include('call.ended');
    expect(endedIn).to.be.below(12_000);
    // Charged up to the last heartbeat: at most a beat (and a little) before the kill, never after it.
    const call = await getCall(placed.id);
    expect(call.status).to.equal('completed');
    const liveSeconds = (killedAt - startedAt) / 1000;
    expect(call.duration_seconds).to.be.within(liveSeconds - (2 * HEARTBEAT_INTERVAL_MS + 500) / 1000, liveSeconds + 1.5);
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds));
    const items = await LedgerItem.find({ call_id: placed.id }).lean();
    expect(items.map((i) => [i.kind, i.amount_paise])).to.deep.equal([['call', -call.cost_paise]]);

    // The provider's call is over, the slot is free, and call.completed still goes out.
    expect(simulated(to).status).to.equal('completed');
    const limits = await (await api.request('/api/v1/workspace/limits', { headers: owner.auth })).json();
    expect(limits.active_calls).to.equal(0);
    const completed = await until(
      () => timeline(placed.id),
      (events) => events.some((e) => e.type === 'call.completed'),
      60_000,
    );
    expect(completed.filter((e) => e.type === 'call.completed')).to.have.length(1);

    // One error event from the media side, and the call ended by the system for it.
    const errors = completed.filter((e) => e.type === 'error');
    const callEnded = completed.find((e) => e.type === 'call.ended')!;
    expect(
      errors.map((e) => [e.level, e.data.provider]),
      `errors ${JSON.stringify(errors)}, then ${callEnded.message}`,
    ).to.deep.equal([['error', 'media']]);
    expect([callEnded.level, callEnded.message]).to.deep.equal(['error', 'ended by system: error']);
    expect([call.hangup_by, call.hangup_reason]).to.deep.equal(['system', 'error']);
  });
});
