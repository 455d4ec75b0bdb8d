import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { AgentVersion } from '../../../db/models/agent-version';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, type SignedUp } from '../../support/accounts';
import { agentsClient } from './helpers';

/** List, read, delete, duplicate; missing agents, other workspaces' agents, who may do what. */
describe('agents: list, read, delete, duplicate', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let agents: ReturnType<typeof agentsClient>;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
    agents = agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId });
  });
  after(() => api.close());

  it('lists every agent of the workspace, newest first, and only those', async () => {
    const stranger = await activeOwner(api);
    await agentsClient(api, stranger.auth).created({ name: 'Theirs' });
    const first = await agents.created({ name: 'First' });
    const second = await agents.created({ name: 'Second' });
    const listed = await (await agents.list()).json();
    expect(listed.slice(0, 2).map((a: { id: string }) => a.id)).to.deep.equal([second.id, first.id]);
    expect(listed.map((a: { name: string }) => a.name)).not.to.include('Theirs');
  });

  it('answers an empty list for a workspace without agents', async () => {
    const fresh = await activeOwner(api);
    const res = await agentsClient(api, fresh.auth).list();
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal([]);
  });

  it("answers 404 `agent not found` for a missing agent and for another workspace's, on every endpoint", async () => {
    const stranger = await activeOwner(api);
    const theirs = await agentsClient(api, stranger.auth).created({ name: 'Theirs' });
    for (const id of ['0'.repeat(32), theirs.id]) {
      for (const res of [
        await agents.get(id),
        await agents.update(id, { name: 'Mine now' }),
        await agents.remove(id),
        await agents.duplicate(id),
        await agents.versions(id),
        await agents.version(id, 1),
        await agents.restore(id, 1),
      ]) {
        expect(res.status).to.equal(404);
        expect(await res.json()).to.deep.equal({ detail: 'agent not found' });
      }
    }
    const untouched = await Agent.findById(theirs.id).lean();
    expect(untouched).to.include({ name: 'Theirs', version: 1 });
  });

  it('answers 422 for an agent id that is not 32 hex characters', async () => {
    const res = await agents.get('not-an-id');
    expect(res.status).to.equal(422);
    const [issue] = (await res.json()).detail;
    expect(issue).to.include({ type: 'string_pattern_mismatch' });
    expect(issue.loc).to.deep.equal(['path', 'agent_id']);
  });

  it('deletes an agent and its versions: 204, then 404', async () => {
    const agent = await agents.created({ name: 'Short-lived' });
    await agents.update(agent.id, { name: 'Short-lived 2' });
    const res = await agents.remove(agent.id);
    expect(res.status).to.equal(204);
    expect(await res.text()).to.equal('');
    expect((await agents.get(agent.id)).status).to.equal(404);
    expect((await agents.remove(agent.id)).status).to.equal(404);
    expect(await AgentVersion.countDocuments({ agent_id: agent.id })).to.equal(0);
  });

  it('duplicates an agent into a new agent at version 1 named as a copy, with every setting', async () => {
    const original = await agents.created({
      name: 'Collections',
      welcome_message: 'Namaste {name}',
      system_prompt: 'Remind {name} about {amount}',
      llm: { provider: 'local', temperature: 1 },
      call: { max_duration_seconds: 900, timezone: 'Europe/London' },
      tools: [
        {
          name: 'pay',
          description: 'Sends a payment link',
          url: 'https://example.com/pay',
          parameters: { type: 'object', properties: { $amount: { type: 'number' } } },
        },
      ],
      analytics: { summarize: true, extractions: [{ key: 'promise_date', type: 'date' }] },
      status: 'paused',
    });
    await agents.update(original.id, { ...stripReadOnly(original), name: 'Collections' });
    const res = await agents.duplicate(original.id);
    expect(res.status).to.equal(201);
    const copy = await res.json();
    expect(copy.id)
      .to.match(/^[0-9a-f]{32}$/)
      .and.not.equal(original.id);
    expect(copy).to.include({ name: 'Collections (copy)', version: 1 });
    expect(stripReadOnly(copy)).to.deep.equal({ ...stripReadOnly(original), name: 'Collections (copy)' });
    expect(copy.variables).to.deep.equal(['name', 'amount']);
    expect(await (await agents.versions(copy.id)).json()).to.have.length(1);
    expect((await (await agents.get(original.id)).json()).version).to.equal(2);
  });

  it("keeps the copy's name within 120 characters", async () => {
    const original = await agents.created({ name: 'n'.repeat(120) });
    const copy = await (await agents.duplicate(original.id)).json();
    expect(copy.name).to.equal(`${'n'.repeat(113)} (copy)`);
    expect([...copy.name]).to.have.length(120);
  });

  it('lets a viewer read but not change; a developer and an API key create, change, duplicate and delete', async () => {
    const agent = await agents.created({ name: 'Shared' });
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect((await agents.list(viewer.headers)).status).to.equal(200);
    expect((await agents.get(agent.id, viewer.headers)).status).to.equal(200);
    for (const res of [
      await agents.create({ name: 'x' }, viewer.headers),
      await agents.update(agent.id, { name: 'x' }, viewer.headers),
      await agents.remove(agent.id, viewer.headers),
      await agents.duplicate(agent.id, viewer.headers),
    ]) {
      expect(res.status).to.equal(403);
      const body = await res.json();
      expect(body.permission).to.equal('agents.edit');
      expect(body.detail).to.include('agents.edit');
    }
    expect((await Agent.findById(agent.id).lean())?.version).to.equal(1);

    for (const headers of [(await memberWithRole(api, owner.workspaceId, 'developer')).headers, (await apiKeyFor(owner.workspaceId)).headers]) {
      const mine = await agents.created({ name: 'Made' }, headers);
      expect((await agents.update(mine.id, { name: 'Changed' }, headers)).status).to.equal(200);
      const copy = await (await agents.duplicate(mine.id, headers)).json();
      expect((await agents.remove(copy.id, headers)).status).to.equal(204);
      expect((await agents.remove(mine.id, headers)).status).to.equal(204);
    }
  });

  it('refuses a concurrent save from the same version with 409 instead of losing it', async () => {
    const agent = await agents.created({ name: 'Contended' });
    const statuses = (await Promise.all(Array.from({ length: 4 }, (_, i) => agents.update(agent.id, { name: `writer ${i}` })))).map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).to.equal(true);
    const saved = statuses.filter((s) => s === 200).length;
    const stored = await Agent.findById(agent.id).lean();
    expect(stored?.version).to.equal(1 + saved);
    expect(await AgentVersion.countDocuments({ agent_id: agent.id })).to.equal(1 + saved);
  });
});

function stripReadOnly(agent: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, version: _v, updated_by: _b, created_at: _c, updated_at: _u, variables: _vars, ...settings } = agent;
  return settings;
}
