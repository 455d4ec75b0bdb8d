import { expect } from 'chai';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';
import { contractCallCost } from '../../support/charges';

type TimelineEntry = { type: string; message: string };

/**
 * The length limit ends a live call: `max_duration_seconds` (30, the least allowed) in real
 * time, since the provider's own time limit runs on the simulator's clock too.
 */
describe('Live conversations: max_duration_seconds', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;

  before(async () => {
    providers = await startTestProviders();
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api);
    await providers.callerFor(owner.workspaceId);
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('a call still going at max_duration_seconds ends then, by the system, charged for that time', async () => {
    const agent = await agentsClient(api, owner.auth).created({
      name: 'Long talker',
      welcome_message: 'Hello.',
      voice: { voice_id: 'meera' },
      call: { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC', max_duration_seconds: 30, hangup_after_silence_seconds: 120 },
    });
    const [to] = randomNumbers(1);
    providers.telephony.setCallee(to!, { kind: 'answer', answerAfterSeconds: 0.5 });
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agent.id, to_number: to, from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status).to.equal(201);
    const { id } = await res.json();
    const events = await until(
      async () => (await api.request(`/api/v1/calls/${id}/events`, { headers: owner.auth })).json() as Promise<TimelineEntry[]>,
      (list) => list.some((e) => e.type === 'call.ended'),
      60_000,
    );
    const call = await (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json();
    expect(call).to.include({ status: 'completed', hangup_by: 'system', hangup_reason: 'max duration reached' });
    expect(call.duration_seconds).to.be.within(29.5, 31);
    expect(events.find((e) => e.type === 'call.ended')!.message).to.equal('ended by system: max duration reached');
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds));
  });
});
