import { expect } from 'chai';
import { AgentVersion } from '../../../db/models/agent-version';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, type SignedUp } from '../../support/accounts';
import { agentsClient, setPlan } from './helpers';

/** Versions: 1 on create, one per PUT and per restore, the newest 10 kept, read and restored. */
describe('agents: versions', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let agents: ReturnType<typeof agentsClient>;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    agents = agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId });
  });
  after(() => api.close());

  /** An agent saved `saves` times: version n is named `v<n>` and has max_tokens 100 + n. */
  const agentWithVersions = async (saves: number) => {
    const agent = await agents.created({ name: 'v1', llm: { max_tokens: 101 } });
    for (let n = 2; n <= saves; n++) {
      const res = await agents.update(agent.id, { name: `v${n}`, llm: { max_tokens: 100 + n } });
      expect(res.status).to.equal(200);
      expect((await res.json()).version).to.equal(n);
    }
    return agent.id as string;
  };

  it('records version 1 on create and a new version on every PUT, even one that changes nothing', async () => {
    const agent = await agents.created({ name: 'Same' });
    const first = await (await agents.update(agent.id, { name: 'Same' })).json();
    expect(first.version).to.equal(2);
    expect(Date.parse(first.updated_at)).to.be.at.least(Date.parse(agent.updated_at));
    expect(first.created_at).to.equal(agent.created_at);
    const versions = await (await agents.versions(agent.id)).json();
    expect(versions.map((v: { version: number }) => v.version)).to.deep.equal([2, 1]);
  });

  it('PUT replaces the whole agent: fields left out go back to their defaults', async () => {
    const agent = await agents.created({ name: 'Full', welcome_message: 'Hi {name}', llm: { temperature: 1.5 }, call: { record: false } });
    const replaced = await (await agents.update(agent.id, { name: 'Full', call: { max_duration_seconds: 60 } })).json();
    expect(replaced).to.deep.include({ welcome_message: '', variables: [] });
    expect(replaced.llm.temperature).to.equal(0.4);
    expect(replaced.call).to.include({ record: true, max_duration_seconds: 60 });
  });

  it('keeps only the newest 10 versions, newest first, each as it was saved', async () => {
    const id = await agentWithVersions(12);
    const versions = await (await agents.versions(id)).json();
    expect(versions.map((v: { version: number }) => v.version)).to.deep.equal([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    for (const v of versions) {
      expect(v).to.include({ id, name: `v${v.version}`, updated_by: 'Asha Rao' });
      expect(v.llm.max_tokens).to.equal(100 + v.version);
    }
    expect(await AgentVersion.countDocuments({ agent_id: id })).to.equal(10);
  });

  it('reads one kept version; a dropped, future or unknown one is 404', async () => {
    const id = await agentWithVersions(11);
    const third = await agents.version(id, 3);
    expect(third.status).to.equal(200);
    expect(await third.json()).to.deep.include({ id, version: 3, name: 'v3' });
    for (const gone of [1, 12, 99]) {
      const res = await agents.version(id, gone);
      expect(res.status).to.equal(404);
      expect(await res.json()).to.deep.equal({ detail: 'version not found' });
    }
  });

  it('takes only an integer from 1 as the version (422 otherwise)', async () => {
    const id = await agentWithVersions(1);
    for (const [version, type] of [
      ['abc', 'int_type'],
      ['1.5', 'int_type'],
      ['0', 'greater_than_equal'],
      ['-1', 'greater_than_equal'],
    ]) {
      for (const res of [await agents.version(id, version), await agents.restore(id, version)]) {
        expect(res.status, version).to.equal(422);
        const [issue] = (await res.json()).detail;
        expect(issue).to.include({ type });
        expect(issue.loc).to.deep.equal(['path', 'version']);
      }
    }
  });

  it('restores a version as a new version with the old settings, answering the agent', async () => {
    const id = await agentWithVersions(10);
    const developer = await memberWithRole(api, owner.workspaceId, 'developer');
    const res = await agents.restore(id, 4, developer.headers);
    expect(res.status).to.equal(200);
    const restored = await res.json();
    expect(restored).to.deep.include({ id, version: 11, name: 'v4', updated_by: 'developer person' });
    expect(restored.llm.max_tokens).to.equal(104);
    expect(await (await agents.get(id)).json()).to.deep.equal(restored);

    const versions = await (await agents.versions(id)).json();
    expect(versions.map((v: { version: number }) => v.version)).to.deep.equal([11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    expect(versions[0]).to.deep.equal(restored);
    const { version: _a, updated_at: _b, updated_by: _c, ...restoredSettings } = restored;
    const { version: _d, updated_at: _e, updated_by: _f, ...oldSettings } = await (await agents.version(id, 4)).json();
    expect(restoredSettings).to.deep.equal(oldSettings);
  });

  it('restores a version that fell out of the kept 10: 404', async () => {
    const id = await agentWithVersions(11);
    expect((await agents.restore(id, 1)).status).to.equal(404);
    expect((await (await agents.get(id)).json()).version).to.equal(11);
  });

  it('refuses to restore a version whose provider the plan no longer allows (422 at the version)', async () => {
    await setPlan(owner.workspaceId, 'growth');
    const agent = await agents.created({ name: 'Dedicated', llm: { provider: 'azure_openai' } });
    await agents.update(agent.id, { name: 'Plain' });
    await setPlan(owner.workspaceId, 'starter');
    const res = await agents.restore(agent.id, 1);
    expect(res.status).to.equal(422);
    const [issue] = (await res.json()).detail;
    expect(issue).to.include({ type: 'value_error', input: 1 });
    expect(issue.loc).to.deep.equal(['path', 'version']);
    expect(issue.msg).to.include('version 1 cannot be restored').and.include('llm.provider');
    expect((await (await agents.get(agent.id)).json()).version).to.equal(2);
  });

  it('answers 409 while another save holds the next version, and takes over a claim its save abandoned', async () => {
    const agent = await agents.created({ name: 'Claimed' });
    const first = await AgentVersion.findById(`${agent.id}:1`).lean();
    const claim = (at: Date) => AgentVersion.create({ ...first, _id: `${agent.id}:2`, version: 2, updated_by: 'other', updated_at: at });
    await claim(new Date());
    const busy = await agents.update(agent.id, { name: 'Mine' });
    expect(busy.status).to.equal(409);
    expect((await (await agents.get(agent.id)).json()).version).to.equal(1);

    await AgentVersion.deleteOne({ _id: `${agent.id}:2` });
    await claim(new Date(Date.now() - 120_000)); // a save that died between its two writes
    const saved = await agents.update(agent.id, { name: 'Mine' });
    expect(saved.status).to.equal(200);
    expect(await saved.json()).to.include({ version: 2, name: 'Mine' });
    expect(await (await agents.version(agent.id, 2)).json()).to.include({ name: 'Mine', updated_by: 'Asha Rao' });
  });

  it('a viewer reads versions but may not restore', async () => {
    const id = await agentWithVersions(2);
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect((await agents.versions(id, viewer.headers)).status).to.equal(200);
    expect((await agents.version(id, 1, viewer.headers)).status).to.equal(200);
    const res = await agents.restore(id, 1, viewer.headers);
    expect(res.status).to.equal(403);
    expect(await res.json()).to.deep.include({ permission: 'agents.edit' });
  });
});
