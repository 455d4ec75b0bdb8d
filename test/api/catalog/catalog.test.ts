import { expect } from 'chai';
import { agentDefaults, llmModels, ttsModels } from '../../../domain/agents/catalog';
import { Workspace } from '../../../db/models/workspace';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { startTestProviders, type TestProviders } from '../../support/providers';

/** GET /catalog: providers, models, transcribers, plan rules and the Agent defaults. */
describe('catalog', () => {
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Record<string, string>;
  before(async () => {
    providers = await startTestProviders();
    api = await startApi({ providers: providers.config });
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  after(async () => {
    await api.close();
    await providers.close();
  });

  const catalog = async (h = headers) => {
    const res = await api.request('/api/v1/catalog', { headers: h });
    expect(res.status).to.equal(200);
    return res.json();
  };

  it('lists every language and speech-synthesis model with its provider, and each provider’s default model among them', async () => {
    const body = await catalog();
    expect(Object.keys(body).sort()).to.deep.equal([
      'defaults',
      'llm_models',
      'llm_providers',
      'llm_providers_allowed',
      'plan',
      'transcribers',
      'tts_models',
      'tts_providers',
    ]);
    expect(body.llm_models).to.deep.equal(llmModels());
    expect(body.tts_models).to.deep.equal(ttsModels());
    expect(body.llm_models).to.deep.include({ provider: 'openai', id: 'gpt-4o-mini', name: 'GPT-4o mini' });
    for (const [providersKey, modelsKey] of [
      ['llm_providers', 'llm_models'],
      ['tts_providers', 'tts_models'],
    ]) {
      for (const provider of body[providersKey]) {
        const ids = body[modelsKey].filter((m: { provider: string }) => m.provider === provider.id).map((m: { id: string }) => m.id);
        expect(ids, `${provider.id} in ${modelsKey}`).to.include(provider.default_model);
      }
    }
  });

  it('names the two speech-recognition providers, their models and which settings apply to which', async () => {
    const { transcribers } = await catalog();
    expect(transcribers).to.deep.equal([
      { id: 'provider_a', name: 'Provider A', model: 'flux-general-multi', settings: ['turn_detection', 'keyterms'] },
      { id: 'provider_b', name: 'Provider B', model: 'nova-3', settings: ['language', 'endpointing_ms', 'keyterms'] },
    ]);
  });

  it('says which language-model providers the plan allows: Starter not the dedicated Azure one, Growth and Scale all', async () => {
    const starter = await catalog();
    expect(starter.plan).to.equal('starter');
    expect(starter.llm_providers_allowed).to.deep.equal(['openai', 'local']);
    expect(starter.llm_providers.map((p: { id: string; allowed: boolean }) => [p.id, p.allowed])).to.deep.equal([
      ['openai', true],
      ['local', true],
      ['azure_openai', false],
    ]);
    for (const plan of ['growth', 'scale']) {
      await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { plan } });
      const body = await catalog();
      expect(body.plan).to.equal(plan);
      expect(body.llm_providers_allowed, plan).to.deep.equal(['openai', 'local', 'azure_openai']);
      expect(
        body.llm_providers.every((p: { allowed: boolean }) => p.allowed),
        plan,
      ).to.equal(true);
    }
    await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { plan: 'starter' } });
  });

  it('serves as defaults exactly what an agent created with only a name gets', async () => {
    const { defaults } = await catalog();
    expect(defaults).to.deep.equal(agentDefaults());
    const created = await api.request('/api/v1/agents', withJson('POST', { name: 'Defaults only' }, headers));
    expect(created.status).to.equal(201);
    const agent = await created.json();
    const settings = Object.fromEntries(Object.keys(defaults).map((key) => [key, agent[key]]));
    expect(settings).to.deep.equal(defaults);
    // Every field of the agent but its name and read-only fields is covered by the defaults.
    const readOnly = ['id', 'name', 'version', 'updated_by', 'created_at', 'updated_at', 'variables'];
    expect(
      Object.keys(agent)
        .filter((k) => !readOnly.includes(k))
        .sort(),
    ).to.deep.equal(Object.keys(defaults).sort());
  });

  it('is readable by every role and by API keys (agents.view)', async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const key = await apiKeyFor(owner.workspaceId);
    expect((await catalog(viewer.headers)).plan).to.equal('starter');
    expect((await catalog(key.headers)).plan).to.equal('starter');
  });
});

/** GET /catalog/voices: the speech-synthesis service's voices, 502 when it does not answer. */
describe('catalog voices', () => {
  let providers: TestProviders;
  let api: RunningApi;
  let headers: Record<string, string>;
  before(async () => {
    providers = await startTestProviders({ timeoutMs: 400 });
    api = await startApi({ providers: providers.config });
    const owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  afterEach(() => {
    providers.speech.mode = 'normal';
    providers.speech.latencyMs = 0;
  });
  after(async () => {
    await api.close();
    await providers.close();
  });

  const voices = () => api.request('/api/v1/catalog/voices', { headers });

  it('lists the voices the service answers, in its order, each saying whether it is the default of its language', async () => {
    const res = await voices();
    expect(res.status).to.equal(200);
    const body: { default: boolean }[] = await res.json();
    expect(body.map(({ default: _default, ...voice }) => voice)).to.deep.equal(providers.speech.voices);
    expect(body.map((v) => v.default)).to.deep.equal([true, false, true, false, true, true]);
  });

  it('waits for a slow service within the timeout', async () => {
    providers.speech.latencyMs = 200;
    expect((await voices()).status).to.equal(200);
  });

  it('answers 502 when the service answers an error', async () => {
    providers.speech.mode = 'failing';
    const res = await voices();
    expect(res.status).to.equal(502);
    expect((await res.json()).detail).to.match(/speech synthesis provider did not answer \(answered 500\); retry/);
  });

  it('answers 502 when the service does not answer within the timeout', async () => {
    providers.speech.mode = 'hanging';
    const started = Date.now();
    const res = await voices();
    expect(res.status).to.equal(502);
    expect((await res.json()).detail).to.include('no answer within 400 ms');
    expect(Date.now() - started).to.be.within(350, 3_000);
  });

  it('answers 502 when the service is slower than the timeout', async () => {
    providers.speech.latencyMs = 800;
    expect((await voices()).status).to.equal(502);
  });

  it('answers 502 when the service refuses the connection, refuses the key, or is not configured', async () => {
    const cases: [string, TestProviders['config'], RegExp][] = [
      ['refused', { ...providers.config, tts: { baseUrl: 'http://127.0.0.1:1', apiKey: 'x' } }, /connection failed/],
      [
        'wrong key',
        { ...providers.config, tts: { baseUrl: providers.speech.url, apiKey: 'wrong' } },
        /refused the credentials \(server setting TTS_API_KEY\): answered 401/,
      ],
      ['not configured', { ...providers.config, tts: null }, /not configured: set TTS_BASE_URL/],
    ];
    for (const [label, config, detail] of cases) {
      const other = await startApi({ providers: config });
      try {
        const res = await other.request('/api/v1/catalog/voices', { headers });
        expect(res.status, label).to.equal(502);
        expect((await res.json()).detail, label).to.match(detail);
      } finally {
        await other.close();
      }
    }
  });
});
