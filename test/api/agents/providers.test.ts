import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { agentsClient, onlyIssue, setPlan } from './helpers';

/** Rules that depend on the catalog and the workspace: providers and models, the plan, knowledge bases. */
describe('agents: providers, models, plans and knowledge bases', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Record<string, string>;
  let agents: ReturnType<typeof agentsClient>;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    agents = agentsClient(api, headers);
  });
  beforeEach(() => setPlan(owner.workspaceId, 'starter'));
  after(() => api.close());

  it('refuses a language-model provider the plan may not use (422), and takes it on a plan that may', async () => {
    const body = { name: 'Dedicated', llm: { provider: 'azure_openai' } };
    const issue = await onlyIssue(await agents.create(body));
    expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'llm', 'provider'], input: 'azure_openai' });
    expect(issue.msg).to.include('starter').and.include('openai, local');
    expect(await Agent.countDocuments({ workspace_id: owner.workspaceId, name: 'Dedicated' })).to.equal(0);

    await setPlan(owner.workspaceId, 'growth');
    const agent = await agents.created(body);
    expect(agent.llm).to.include({ provider: 'azure_openai', model: 'gpt-4o-mini' });

    await setPlan(owner.workspaceId, 'starter');
    const update = await onlyIssue(await agents.update(agent.id, { name: 'Dedicated', llm: { provider: 'azure_openai', model: 'gpt-4o' } }));
    expect(update.loc).to.deep.equal(['body', 'llm', 'provider']);
    expect((await (await agents.get(agent.id)).json()).version).to.equal(1);
  });

  it('refuses an unknown language-model provider', async () => {
    const issue = await onlyIssue(await agents.create({ name: 'x', llm: { provider: 'anthropic' } }));
    expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'llm', 'provider'], input: 'anthropic' });
  });

  it('takes only a model of the chosen language-model provider', async () => {
    expect((await agents.created({ name: 'x', llm: { provider: 'openai', model: 'gpt-4.1' } })).llm.model).to.equal('gpt-4.1');
    const issue = await onlyIssue(await agents.create({ name: 'x', llm: { provider: 'local', model: 'gpt-4o' } }));
    expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'llm', 'model'], input: 'gpt-4o' });
    expect(issue.msg).to.include('local-chat');
    const defaultProvider = await onlyIssue(await agents.create({ name: 'x', llm: { model: 'local-chat' } }));
    expect(defaultProvider.loc).to.deep.equal(['body', 'llm', 'model']);
  });

  it('takes only a speech-synthesis provider and model of the catalog', async () => {
    expect((await agents.created({ name: 'x', voice: { provider: 'openai', model: 'tts-1-hd' } })).voice.model).to.equal('tts-1-hd');
    expect(await onlyIssue(await agents.create({ name: 'x', voice: { provider: 'elevenlabs' } }))).to.deep.include({
      type: 'value_error',
      loc: ['body', 'voice', 'provider'],
    });
    expect(await onlyIssue(await agents.create({ name: 'x', voice: { provider: 'local', model: 'tts-1' } }))).to.deep.include({
      type: 'value_error',
      loc: ['body', 'voice', 'model'],
    });
  });

  it('reports every broken rule at once', async () => {
    const res = await agents.create({
      name: 'x',
      llm: { provider: 'anthropic' },
      voice: { model: 'nope' },
      call: { call_start_hour: 22, call_end_hour: 8, timezone: 'Nowhere/City' },
    });
    expect(res.status).to.equal(422);
    const locs = (await res.json()).detail.map((i: { loc: unknown[] }) => i.loc.join('.'));
    expect(locs).to.have.members(['body.llm.provider', 'body.voice.model', 'body.call.call_start_hour', 'body.call.timezone']);
  });

  describe('knowledge bases', () => {
    const newBase = async (h: Record<string, string>, name: string) => {
      const res = await api.request('/api/v1/knowledge-bases', withJson('POST', { name }, h));
      expect(res.status).to.equal(201);
      return (await res.json()).id as string;
    };

    it("takes up to 10 of the workspace's knowledge bases", async () => {
      const ids = [];
      for (let i = 0; i < 10; i++) ids.push(await newBase(headers, `base ${i}`));
      expect((await agents.created({ name: 'Knows', knowledge_base_ids: ids })).knowledge_base_ids).to.deep.equal(ids);
    });

    it('refuses an id that is not a knowledge base of the workspace, at its index', async () => {
      const mine = await newBase(headers, 'mine');
      const stranger = await activeOwner(api);
      const theirs = await newBase({ ...stranger.auth, 'X-Workspace-ID': stranger.workspaceId }, 'theirs');
      const res = await agents.create({ name: 'x', knowledge_base_ids: [mine, theirs, 'a'.repeat(32)] });
      expect(res.status).to.equal(422);
      expect((await res.json()).detail).to.deep.equal([
        { type: 'value_error', loc: ['body', 'knowledge_base_ids', 1], msg: 'no knowledge base with this id in the workspace', input: theirs },
        { type: 'value_error', loc: ['body', 'knowledge_base_ids', 2], msg: 'no knowledge base with this id in the workspace', input: 'a'.repeat(32) },
      ]);
    });
  });
});
