import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner } from '../../support/accounts';
import { agentsClient, setPlan } from './helpers';

/** The plan's agent limit (Starter 10, Growth 50, Scale none), on create and on duplicate. */
describe("agents: the plan's agent limit", () => {
  let api: RunningApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  const workspaceOn = async (plan: string) => {
    const owner = await activeOwner(api);
    await setPlan(owner.workspaceId, plan);
    return { workspaceId: owner.workspaceId, agents: agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId }) };
  };

  for (const [plan, limit] of [
    ['starter', 10],
    ['growth', 50],
  ] as const) {
    it(`${plan}: allows ${limit} agents; the next create and duplicate are 409 and add nothing`, async () => {
      const { workspaceId, agents } = await workspaceOn(plan);
      let first = '';
      for (let i = 0; i < limit; i++) {
        const agent = await agents.created({ name: `agent ${i}` });
        first ||= agent.id;
      }
      const over = await agents.create({ name: 'one too many' });
      expect(over.status).to.equal(409);
      expect((await over.json()).detail).to.include(`allows ${limit} agents`);
      expect((await agents.duplicate(first)).status).to.equal(409);
      expect(await Agent.countDocuments({ workspace_id: workspaceId })).to.equal(limit);

      expect((await agents.remove(first)).status).to.equal(204);
      expect((await agents.create({ name: 'room again' })).status).to.equal(201);
    });
  }

  it('scale: no limit (more agents than the largest limited plan allows)', async () => {
    const { workspaceId, agents } = await workspaceOn('scale');
    for (let i = 0; i < 51; i++) await agents.created({ name: `agent ${i}` });
    expect(await Agent.countDocuments({ workspace_id: workspaceId })).to.equal(51);
  });

  it('never goes over the limit when creates race for the last place', async () => {
    const { workspaceId, agents } = await workspaceOn('starter');
    for (let i = 0; i < 9; i++) await agents.created({ name: `agent ${i}` });
    const statuses = (await Promise.all(Array.from({ length: 5 }, (_, i) => agents.create({ name: `racer ${i}` })))).map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).to.be.at.most(1);
    expect(statuses.every((s) => s === 201 || s === 409)).to.equal(true);
    expect(await Agent.countDocuments({ workspace_id: workspaceId })).to.be.at.most(10);
  });

  it('counts each workspace on its own', async () => {
    const full = await workspaceOn('starter');
    for (let i = 0; i < 10; i++) await full.agents.created({ name: `agent ${i}` });
    const other = await workspaceOn('starter');
    expect((await other.agents.create({ name: 'mine' })).status).to.equal(201);
  });
});
