import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { PhoneNumber } from '../../../db/models/phone-number';
import { claimNumber } from '../../../domain/numbers/phone-numbers';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, type SignedUp } from '../../support/accounts';
import { agentsClient, onlyIssue } from './helpers';

/** `phone_number`: a number of the workspace, changed only with numbers.manage, released on delete. */
describe('agents: phone_number', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let agents: ReturnType<typeof agentsClient>;
  let developer: Record<string, string>;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
    agents = agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId });
    developer = (await memberWithRole(api, owner.workspaceId, 'developer')).headers;
  });
  after(() => api.close());

  const uniqueNumber = () => `+9180${randomInt(10_000_000, 99_999_999)}`;
  const claimed = async (workspaceId = owner.workspaceId) => {
    const number = uniqueNumber();
    await claimNumber(workspaceId, { number, by: 'test', at: new Date(), lookUp: async () => ({ region: 'Bengaluru', numberType: 'local' }) });
    return number;
  };
  const connectedAgentOf = async (number: string) => (await PhoneNumber.findOne({ number }).lean())?.agent_id ?? null;

  it('connects a number of the workspace to a new agent', async () => {
    const number = await claimed();
    const agent = await agents.created({ name: 'Inbound', phone_number: number });
    expect(agent.phone_number).to.equal(number);
    expect(await connectedAgentOf(number)).to.equal(agent.id);
    expect((await (await agents.get(agent.id)).json()).phone_number).to.equal(number);
  });

  it("refuses a number that is not the workspace's (422) and creates nothing", async () => {
    const before = await Agent.countDocuments({ workspace_id: owner.workspaceId });
    // The shortest and longest E.164 numbers pass the pattern and fail on the workspace.
    for (const number of ['+1234567', '+123456789012345']) {
      const issue = await onlyIssue(await agents.create({ name: 'Stray', phone_number: number }));
      expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'phone_number'], input: number });
    }
    expect(await Agent.countDocuments({ workspace_id: owner.workspaceId })).to.equal(before);
  });

  it('answers 409 for a number another workspace holds, and creates nothing', async () => {
    const stranger = await activeOwner(api);
    const theirs = await claimed(stranger.workspaceId);
    const before = await Agent.countDocuments({ workspace_id: owner.workspaceId });
    const res = await agents.create({ name: 'Thief', phone_number: theirs });
    expect(res.status).to.equal(409);
    expect(await Agent.countDocuments({ workspace_id: owner.workspaceId })).to.equal(before);
    expect(await connectedAgentOf(theirs)).to.equal(null);
  });

  it('needs numbers.manage to set a number: a developer and an API key get 403 naming it', async () => {
    const number = await claimed();
    for (const headers of [developer, (await apiKeyFor(owner.workspaceId)).headers]) {
      const res = await agents.create({ name: 'No right', phone_number: number }, headers);
      expect(res.status).to.equal(403);
      const body = await res.json();
      expect(body.permission).to.equal('numbers.manage');
      expect(body.detail).to.include('numbers.manage');
    }
    expect(await connectedAgentOf(number)).to.equal(null);
  });

  it('lets a developer save an agent with its number unchanged or left out, but not change or remove it', async () => {
    const number = await claimed();
    const other = await claimed();
    const agent = await agents.created({ name: 'Numbered', phone_number: number });
    const same = await agents.update(agent.id, { name: 'Same number', phone_number: number }, developer);
    expect(same.status).to.equal(200);
    const omitted = await (await agents.update(agent.id, { name: 'Left out' }, developer)).json();
    expect(omitted).to.include({ phone_number: number, version: 3 });
    for (const phone_number of [null, other]) {
      const res = await agents.update(agent.id, { name: 'Changed', phone_number }, developer);
      expect(res.status).to.equal(403);
      expect((await res.json()).permission).to.equal('numbers.manage');
    }
    expect(await Agent.findById(agent.id).lean()).to.include({ phone_number: number, version: 3 });
    expect(await connectedAgentOf(number)).to.equal(agent.id);
  });

  it('lets an admin move the agent to another number and release it with null', async () => {
    const admin = (await memberWithRole(api, owner.workspaceId, 'admin')).headers;
    const first = await claimed();
    const second = await claimed();
    const agent = await agents.created({ name: 'Moving', phone_number: first });
    const moved = await (await agents.update(agent.id, { name: 'Moving', phone_number: second }, admin)).json();
    expect(moved.phone_number).to.equal(second);
    expect(await connectedAgentOf(first)).to.equal(null);
    expect(await connectedAgentOf(second)).to.equal(agent.id);
    const released = await (await agents.update(agent.id, { name: 'Moving', phone_number: null }, admin)).json();
    expect(released.phone_number).to.equal(null);
    expect(await connectedAgentOf(second)).to.equal(null);
  });

  it("a restore keeps the agent's current number; a copy gets none", async () => {
    const agent = await agents.created({ name: 'Before the number' });
    const number = await claimed();
    await agents.update(agent.id, { name: 'With the number', phone_number: number });
    const restored = await (await agents.restore(agent.id, 1, developer)).json();
    expect(restored).to.include({ name: 'Before the number', phone_number: number, version: 3 });
    const copy = await (await agents.duplicate(agent.id, developer)).json();
    expect(copy.phone_number).to.equal(null);
    expect(await connectedAgentOf(number)).to.equal(agent.id);
  });

  it('deleting the agent releases its number, which stays in the workspace', async () => {
    const number = await claimed();
    const agent = await agents.created({ name: 'Doomed', phone_number: number });
    expect((await agents.remove(agent.id)).status).to.equal(204);
    const record = await PhoneNumber.findOne({ number }).lean();
    expect(record).to.include({ workspace_id: owner.workspaceId, agent_id: null });
  });
});
