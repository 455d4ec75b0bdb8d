import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';

/** Calling hours open all day, so that placed calls are dialled at once. */
const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };

type TimelineEntry = { type: string; message: string; level: string; data: Record<string, unknown> };

/**
 * A newcomer's first call: an agent created with nothing but a name speaks (the speech
 * server's default voice for its language), and a call the speech server refuses ends with
 * an `error` event that names the setting to fix and whose it is, while a server that fails
 * (5xx) is one to retry. End to end through the simulators `npm start` runs: API, workers,
 * media service, FerretDB and Temporal.
 */
describe('The first call of a name-only agent, and provider refusals on a call', function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;

  const callee = (): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9197'));
    providers.telephony.setCallee(number, { kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Hello?' }, { say: 'Okay thanks, bye.' }] });
    return number;
  };
  /** Places a call with the agent and answers its timeline once `call.completed` is on it. */
  const callWith = async (agentId: string): Promise<TimelineEntry[]> => {
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agentId, to_number: callee(), from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    const { id } = await res.json();
    return until(
      async () => (await api.request(`/api/v1/calls/${id}/events`, { headers: owner.auth })).json() as Promise<TimelineEntry[]>,
      (events) => events.some((e) => e.type === 'call.completed'),
      90_000,
    );
  };
  const errorOf = (events: TimelineEntry[]): TimelineEntry => {
    const errors = events.filter((e) => e.type === 'error');
    expect(errors, JSON.stringify(events.map((e) => [e.type, e.message]))).to.have.length(1);
    return errors[0]!;
  };

  before(async () => {
    providers = await startTestProviders({ timeScale: 0.05 });
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
  });
  afterEach(() => {
    providers.speech.mode = 'normal';
    providers.speech.apiKey = providers.config.tts!.apiKey;
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('an agent created with only a name speaks its welcome in the default voice of its language and completes the call', async () => {
    const agent = await agentsClient(api, owner.auth).created({ name: 'Support', welcome_message: 'Namaste, this is Support.', call: OPEN_HOURS });
    expect(agent.voice).to.include({ voice_id: null, language: 'hi' });
    const spokenBefore = providers.speech.speechRequests.length;

    const events = await callWith(agent.id);

    const types = events.map((e) => e.type);
    expect(types, JSON.stringify(events.map((e) => [e.type, e.message]))).to.not.include('error');
    expect(types).to.include.members(['welcome', 'tts.first_audio', 'call.ended', 'call.completed']);
    expect(types.indexOf('tts.first_audio')).to.be.above(types.indexOf('welcome'));
    expect(events.find((e) => e.type === 'call.ended')!.level).to.equal('info');
    // `anika` is the simulator's first Hindi voice: the one GET /catalog/voices marks as the default for `hi`.
    const spoken = providers.speech.speechRequests.slice(spokenBefore);
    expect(spoken[0]).to.include({ input: 'Namaste, this is Support.', voice: 'anika', lang_code: 'hi' });
  });

  it('a revoked speech key ends the call with an error naming the server setting TTS_API_KEY, not asking to retry', async () => {
    const agent = await agentsClient(api, owner.auth).created({ name: 'Support', welcome_message: 'Hello, this is Support.', call: OPEN_HOURS });
    providers.speech.apiKey = 'a-key-the-service-does-not-have';

    const error = errorOf(await callWith(agent.id));

    expect(error.message).to.contain('refused the credentials (server setting TTS_API_KEY)');
    expect(error.message).to.contain('answered 401');
    expect(error.message).to.not.contain('retry');
  });

  it('a voice the speech server no longer has ends the call with an error naming the agent setting voice.voice_id', async () => {
    const agent = await agentsClient(api, owner.auth).created({
      name: 'Support',
      welcome_message: 'Hello, this is Support.',
      voice: { voice_id: 'meera', language: 'en-IN' },
      call: OPEN_HOURS,
    });
    // The server dropped the voice after the agent was saved (saving it now would be a 422).
    await Agent.updateOne({ _id: agent.id }, { $set: { 'voice.voice_id': 'retired-voice' } });

    const error = errorOf(await callWith(agent.id));

    expect(error.message).to.contain("refused the agent's voice 'retired-voice' (agent setting voice.voice_id)");
    expect(error.message).to.not.contain('retry');
  });

  it('a speech server that fails (5xx) ends the call with an error asking to retry in a moment', async () => {
    const agent = await agentsClient(api, owner.auth).created({
      name: 'Support',
      welcome_message: 'Hello, this is Support.',
      voice: { voice_id: 'meera', language: 'en-IN' },
      call: OPEN_HOURS,
    });
    providers.speech.mode = 'failing';

    const error = errorOf(await callWith(agent.id));

    expect(error.message).to.contain('answered 500');
    expect(error.message).to.contain('retry in a moment');
  });
});
