import { expect } from 'chai';
import { agentDefaults } from '../../../domain/agents/catalog';
import { Agent } from '../../../db/models/agent';
import { AgentVersion } from '../../../db/models/agent-version';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, type SignedUp } from '../../support/accounts';
import { agentsClient } from './helpers';

/** POST /agents with only a name: every default of the contract's Agent table, and the read-only fields. */
describe('agents: defaults and read-only fields', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let agents: ReturnType<typeof agentsClient>;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    agents = agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId });
  });
  after(() => api.close());

  it('creates an agent from a name alone with every default of the Agent table', async () => {
    const res = await agents.create({ name: 'Reminder bot' });
    expect(res.status).to.equal(201);
    const agent = await res.json();
    expect(agent).to.deep.include({
      name: 'Reminder bot',
      welcome_message: '',
      system_prompt: '',
      llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0.4, max_tokens: 300 },
      voice: { provider: 'openai', model: 'gpt-4o-mini-tts', voice_id: null, voice_name: null, language: 'hi', speed: 1 },
      transcriber: {
        provider: 'provider_a',
        model: 'flux-general-multi',
        turn_detection: 'balanced',
        language: 'hi',
        endpointing_ms: 300,
        keyterms: [],
        speculative_replies: false,
      },
      call: {
        max_duration_seconds: 600,
        hangup_after_silence_seconds: 15,
        allow_interruptions: true,
        interruption_min_words: 2,
        call_start_hour: 9,
        call_end_hour: 21,
        timezone: 'Asia/Kolkata',
        record: true,
        hangup_message: '',
        hangup_on_prompt: false,
        hangup_prompt: '',
        hangup_interruptible: false,
        check_user_online: false,
        user_online_message: 'Are you still there?',
        user_online_after_seconds: 9,
        // Issue 20's settings: off by default, so that nothing changes for an agent that does not set them.
        keypad: { press_digits: false, caller_digits: false },
        voicemail: { detect: false, action: 'hang_up', message: '' },
        transfer: { destinations: [], handover_message: '', ring_timeout_seconds: 30 },
        // Issue 31: new agents honour a caller's "do not call me again" (0206).
        opt_out: true,
        opt_out_message: '',
        data_storage: 'everything',
      },
      analytics: { summarize: false, extractions: [], extraction_prompt: '' },
      tools: [],
      knowledge_base_ids: [],
      webhook_url: null,
      phone_number: null,
      status: 'active',
      variables: [],
      version: 1,
      updated_by: 'Asha Rao',
    });
    expect(agent.id).to.match(/^[0-9a-f]{32}$/);
    expect(agent.created_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+05:30$/);
    expect(agent.updated_at).to.equal(agent.created_at);
    expect(Object.keys(agent).sort()).to.deep.equal(
      [
        'analytics',
        'call',
        'created_at',
        'id',
        'knowledge_base_ids',
        'llm',
        'name',
        'phone_number',
        'status',
        'system_prompt',
        'tools',
        'transcriber',
        'updated_at',
        'updated_by',
        'variables',
        'version',
        'voice',
        'webhook_url',
        'welcome_message',
      ].sort(),
    );
  });

  it('takes its defaults from the catalog module', async () => {
    const agent = await agents.created({ name: 'Catalog defaults' });
    const { id: _id, name: _name, variables: _v, version: _version, updated_by: _by, created_at: _c, updated_at: _u, ...settings } = agent;
    expect(settings).to.deep.equal(agentDefaults());
  });

  it('stores the agent in its workspace with version 1 recorded', async () => {
    const agent = await agents.created({ name: 'Stored' });
    const stored = await Agent.findById(agent.id).lean();
    expect(stored).to.include({ workspace_id: owner.workspaceId, version: 1, updated_by: 'Asha Rao' });
    const versions = await AgentVersion.find({ agent_id: agent.id }).lean();
    expect(versions.map((v) => v.version)).to.deep.equal([1]);
  });

  it("reads it back the same by GET, in the list, and in the caller's time zone", async () => {
    const agent = await agents.created({ name: 'Read back' });
    expect(await (await agents.get(agent.id)).json()).to.deep.equal(agent);
    const listed = (await (await agents.list()).json()).find((a: { id: string }) => a.id === agent.id);
    expect(listed).to.deep.equal(agent);
    const utc = await (await api.request(`/api/v1/agents/${agent.id}?timezone=UTC`, { headers: { ...owner.auth } })).json();
    expect(utc.created_at).to.match(/\+00:00$/);
    expect(Date.parse(utc.created_at)).to.equal(Date.parse(agent.created_at));
  });

  it('names an API key as `key:<name>` in updated_by', async () => {
    const key = await apiKeyFor(owner.workspaceId, 'deployer');
    const agent = await agents.created({ name: 'By key' }, key.headers);
    expect(agent.updated_by).to.equal('key:deployer');
  });

  it('ignores a transcriber model sent by the client: it follows the provider', async () => {
    const a = await agents.created({ name: 'Model A', transcriber: { provider: 'provider_a', model: 'something-else' } });
    expect(a.transcriber.model).to.equal('flux-general-multi');
    const b = await agents.created({ name: 'Model B', transcriber: { provider: 'provider_b' } });
    expect(b.transcriber.model).to.equal('nova-3');
    const updated = await (await agents.update(a.id, { name: 'Model A', transcriber: { provider: 'provider_b', model: 'flux-general-multi' } })).json();
    expect(updated.transcriber.model).to.equal('nova-3');
  });

  it('keeps settings the transcriber provider does not use', async () => {
    const agent = await agents.created({ name: 'Inapplicable', transcriber: { provider: 'provider_a', language: 'ta', endpointing_ms: 900 } });
    expect(agent.transcriber).to.include({ provider: 'provider_a', language: 'ta', endpointing_ms: 900 });
  });

  it('takes the default model of the provider chosen', async () => {
    const agent = await agents.created({ name: 'Local', llm: { provider: 'local' }, voice: { provider: 'local' } });
    expect(agent.llm).to.include({ provider: 'local', model: 'local-chat' });
    expect(agent.voice).to.include({ provider: 'local', model: 'local-tts' });
  });

  it('fills the defaults of tool and extraction items', async () => {
    const agent = await agents.created({
      name: 'Items',
      tools: [{ name: 'lookup', description: 'Looks things up', url: 'https://example.com/lookup' }],
      analytics: { extractions: [{ key: 'city' }] },
    });
    expect(agent.tools).to.deep.equal([
      {
        name: 'lookup',
        description: 'Looks things up',
        parameters: { type: 'object', properties: {} },
        method: 'POST',
        url: 'https://example.com/lookup',
        headers: {},
        pre_call_message: '',
        timeout_seconds: 8,
      },
    ]);
    expect(agent.analytics.extractions).to.deep.equal([{ key: 'city', label: '', type: 'text', description: '', choices: [] }]);
  });
});
