import { expect } from 'chai';
import { activeOwner, oauthTokenFor, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { startTestProviders, type TestProviders } from '../../support/providers';
import { connectMcp, type McpSession } from '../mcp/mcp-client';
import { agentsClient, onlyIssue } from './helpers';

/**
 * An agent's `voice.voice_id` is a voice of the speech-synthesis service (the contract's "a
 * voice from the voices list"), asked of the service (the simulator `npm start` runs) on every
 * save; empty, the agent speaks with the service's default voice for its language, which the
 * catalog marks.
 */
describe('agents: the voice is one of the speech service’s voices', function () {
  this.timeout(60_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let agents: ReturnType<typeof agentsClient>;
  let mcp: McpSession;

  const agentIds = async (): Promise<string[]> => (await (await agents.list()).json()).map((a: { id: string }) => a.id);

  before(async () => {
    providers = await startTestProviders();
    api = await startApi({ providers: providers.config });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    agents = agentsClient(api, owner.auth);
    mcp = await connectMcp(api, (await oauthTokenFor(owner.workspaceId, owner.userId)).token);
  });
  afterEach(() => {
    providers.speech.mode = 'normal';
  });
  after(async () => {
    await mcp?.close();
    await api?.close();
    await providers?.close();
  });

  it('the catalog marks the default voice of each language: the first the service lists for it', async () => {
    const res = await api.request('/api/v1/catalog/voices', { headers: owner.auth });
    expect(res.status).to.equal(200);
    const voices: { id: string; language: string; default: boolean }[] = await res.json();
    expect(voices.map((v) => [v.id, v.language, v.default])).to.deep.equal([
      ['anika', 'hi', true],
      ['kabir', 'hi', false],
      ['meera', 'en-IN', true],
      ['arjun', 'en-IN', false],
      ['tara', 'ta', true],
      ['dev', 'mr', true],
    ]);
  });

  it('creates and updates agents with a voice of the service', async () => {
    const created = await agents.created({ name: 'Kabir line', voice: { voice_id: 'kabir', language: 'hi' } });
    expect(created.voice).to.include({ voice_id: 'kabir', language: 'hi' });
    const updated = await agents.update(created.id, { name: 'Kabir line', voice: { voice_id: 'arjun', language: 'en-IN' } });
    expect(updated.status).to.equal(200);
    expect((await updated.json()).voice).to.include({ voice_id: 'arjun', language: 'en-IN' });
  });

  it('refuses a voice the service does not have with 422 at voice.voice_id, on create and update, and saves nothing', async () => {
    const before = await agentIds();
    const issue = await onlyIssue(await agents.create({ name: 'Support', voice: { voice_id: 'alloy' } }));
    expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'voice', 'voice_id'], input: 'alloy' });
    expect(issue.msg).to.contain('anika, kabir, meera, arjun, tara, dev');
    expect(await agentIds()).to.deep.equal(before);

    const agent = await agents.created({ name: 'Support' });
    const refused = await onlyIssue(await agents.update(agent.id, { name: 'Support', voice: { voice_id: 'alloy' } }));
    expect(refused.loc).to.deep.equal(['body', 'voice', 'voice_id']);
    expect((await (await agents.get(agent.id)).json()).version).to.equal(1);
  });

  it('the MCP tools create_agent and update_agent follow the same rule', async () => {
    const created = await mcp.call('create_agent', { name: 'Support', voice: { voice_id: 'alloy' } });
    expect(created.isError).to.equal(true);
    expect(created.body.status).to.equal(422);
    expect(created.body.detail[0].loc).to.deep.equal(['body', 'voice', 'voice_id']);
    const agent = await agents.created({ name: 'Support' });
    const updated = await mcp.call('update_agent', { agent_id: agent.id, name: 'Support', voice: { voice_id: 'alloy' } });
    expect(updated.body.status).to.equal(422);
  });

  it('answers 502 and saves nothing when the service cannot be asked about a voice', async () => {
    const agent = await agents.created({ name: 'Support', voice: { voice_id: 'meera', language: 'en-IN' } });
    const before = await agentIds();
    providers.speech.mode = 'failing';

    const create = await agents.create({ name: 'Support', voice: { voice_id: 'meera' } });
    expect(create.status).to.equal(502);
    expect((await create.json()).detail).to.contain('speech synthesis');
    const update = await agents.update(agent.id, { name: 'Support again', voice: { voice_id: 'anika' } });
    expect(update.status).to.equal(502);
    const duplicate = await agents.duplicate(agent.id);
    expect(duplicate.status).to.equal(502);

    providers.speech.mode = 'hanging';
    const unanswered = await agents.create({ name: 'Support', voice: { voice_id: 'meera' } });
    expect(unanswered.status).to.equal(502);
    expect((await unanswered.json()).detail).to.contain('no answer within 1000 ms');

    providers.speech.mode = 'normal';
    expect(await agentIds()).to.deep.equal(before);
    expect(await (await agents.get(agent.id)).json()).to.include({ name: 'Support', version: 1 });
  });

  it('a voice left empty asks the service nothing: the agent follows the default voice of its language, also after a change of language', async () => {
    providers.speech.mode = 'failing';
    const agent = await agents.created({ name: 'Support' });
    expect(agent.voice).to.include({ voice_id: null, language: 'hi' });
    const updated = await agents.update(agent.id, { name: 'Support', voice: { language: 'en-IN' } });
    expect(updated.status).to.equal(200);
    expect((await updated.json()).voice).to.include({ voice_id: null, language: 'en-IN' });
  });
});
