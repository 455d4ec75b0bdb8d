import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import { PhoneNumber } from '../../../db/models/phone-number';
import { AuditEvent } from '../../../db/models/audit-event';
import { Workspace } from '../../../db/models/workspace';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { startTestProviders, type TestProviders } from '../../support/providers';

/**
 * Connecting numbers to agents: the number record and the agent's `phone_number` agree after
 * every connect, move, disconnect, release and agent deletion, and after a crash between
 * the two writes.
 */
describe('phone numbers: connections to agents', () => {
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Record<string, string>;
  let rival: Record<string, string>;
  before(async () => {
    providers = await startTestProviders({ poolSize: 40 });
    api = await startApi({ providers: providers.config });
    owner = await activeOwner(api);
    // More agents than Starter's 10 are made here; the plan limit is the agents tests' subject.
    await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { plan: 'scale' } });
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    const other = await activeOwner(api);
    rival = { ...other.auth, 'X-Workspace-ID': other.workspaceId };
  });
  after(async () => {
    await api.close();
    await providers.close();
  });

  let next = 0;
  /** Claims a fresh number of the pool for the workspace. */
  const claimed = async (h = headers) => {
    const number = providers.pool[next++]!;
    const res = await api.request('/api/v1/phone-numbers', withJson('POST', { number }, h));
    expect(res.status).to.equal(201);
    return number;
  };
  const newAgent = async (name = 'Receptionist', h = headers): Promise<string> => {
    const res = await api.request('/api/v1/agents', withJson('POST', { name }, h));
    expect(res.status).to.equal(201);
    return (await res.json()).id;
  };
  const path = (number: string) => `/api/v1/phone-numbers/${encodeURIComponent(number)}/agent`;
  const connect = (number: string, agentId: unknown, h = headers) => api.request(path(number), withJson('PUT', { agent_id: agentId }, h));
  const disconnect = (number: string, h = headers) => api.request(path(number), { method: 'DELETE', headers: h });
  const agentNumber = async (agentId: string, h = headers) => (await (await api.request(`/api/v1/agents/${agentId}`, { headers: h })).json()).phone_number;
  const numberAgent = async (number: string) => (await PhoneNumber.findOne({ number }).lean())?.agent_id ?? null;
  const listed = async (number: string) =>
    ((await (await api.request('/api/v1/phone-numbers', { headers })).json()) as { number: string }[]).find((n) => n.number === number);

  it('connects a number to an agent: both sides agree, the list names the agent', async () => {
    const number = await claimed();
    const agentId = await newAgent('Front desk');
    const res = await connect(number, agentId);
    expect(res.status).to.equal(200);
    const body = await res.json();
    expect(body).to.include({ number, agent_id: agentId, agent_name: 'Front desk' });
    expect(body.connected_at).to.match(/\+05:30$/);
    expect(await agentNumber(agentId)).to.equal(number);
    expect(await listed(number)).to.deep.equal(body);
    expect(await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'phone_number.connected', 'target.name': number })).to.equal(1);
  });

  it('gives an agent one number: connecting a second frees the first', async () => {
    const [first, second] = [await claimed(), await claimed()];
    const agentId = await newAgent();
    await connect(first, agentId);
    expect((await connect(second, agentId)).status).to.equal(200);
    expect(await agentNumber(agentId)).to.equal(second);
    expect(await numberAgent(first)).to.equal(null);
    expect(await numberAgent(second)).to.equal(agentId);
  });

  it('moves a number connected to another agent of the workspace; that agent loses it', async () => {
    const number = await claimed();
    const [a, b] = [await newAgent('A'), await newAgent('B')];
    await connect(number, a);
    expect((await connect(number, b)).status).to.equal(200);
    expect(await agentNumber(a)).to.equal(null);
    expect(await agentNumber(b)).to.equal(number);
    expect(await numberAgent(number)).to.equal(b);
  });

  it('connecting the agent it already has changes nothing', async () => {
    const number = await claimed();
    const agentId = await newAgent();
    const first = await (await connect(number, agentId)).json();
    const again = await connect(number, agentId);
    expect(again.status).to.equal(200);
    expect(await again.json()).to.deep.equal(first);
  });

  it('disconnects: both sides empty, the number stays in the workspace; disconnecting again is a no-op', async () => {
    const number = await claimed();
    const agentId = await newAgent();
    await connect(number, agentId);
    for (let i = 0; i < 2; i++) {
      const res = await disconnect(number);
      expect(res.status).to.equal(200);
      expect(await res.json()).to.include({ number, agent_id: null, agent_name: null, connected_at: null });
    }
    expect(await agentNumber(agentId)).to.equal(null);
    expect(await listed(number)).to.include({ agent_id: null });
  });

  it('releasing a connected number disconnects its agent', async () => {
    const number = await claimed();
    const agentId = await newAgent();
    await connect(number, agentId);
    expect((await api.request(`/api/v1/phone-numbers/${encodeURIComponent(number)}`, { method: 'DELETE', headers })).status).to.equal(204);
    expect(await agentNumber(agentId)).to.equal(null);
    expect(await PhoneNumber.countDocuments({ number })).to.equal(0);
  });

  it('deleting an agent disconnects its number, which stays in the workspace', async () => {
    const number = await claimed();
    const agentId = await newAgent();
    await connect(number, agentId);
    expect((await api.request(`/api/v1/agents/${agentId}`, { method: 'DELETE', headers })).status).to.equal(204);
    expect(await numberAgent(number)).to.equal(null);
    expect(await listed(number)).to.include({ agent_id: null, agent_name: null });
  });

  it('the agents endpoints connect and disconnect through the same records', async () => {
    const [first, second] = [await claimed(), await claimed()];
    const agentId = await newAgent();
    await connect(first, agentId);
    const put = await api.request(`/api/v1/agents/${agentId}`, withJson('PUT', { name: 'B', phone_number: second }, headers));
    expect(put.status).to.equal(200);
    expect(await agentNumber(agentId)).to.equal(second);
    expect(await numberAgent(second)).to.equal(agentId);
    expect(await numberAgent(first)).to.equal(null);
    expect((await api.request(`/api/v1/agents/${agentId}`, withJson('PUT', { name: 'B', phone_number: null }, headers))).status).to.equal(200);
    expect(await numberAgent(second)).to.equal(null);
    expect(await agentNumber(agentId)).to.equal(null);
  });

  it('repairs the agent side when the numbers are listed, after a crash between the two writes', async () => {
    const [number, stale] = [await claimed(), await claimed()];
    const connectedOnlyInRecord = await newAgent('Crashed before the agent write');
    const staleAgent = await newAgent('Crashed after a disconnect');
    const orphanNumber = await claimed();
    // The record says connected, the agent field was never written.
    await PhoneNumber.updateOne({ number }, { $set: { agent_id: connectedOnlyInRecord, connection_key: connectedOnlyInRecord } });
    // The agent field still names a number the record no longer connects it to.
    await Agent.updateOne({ _id: staleAgent }, { $set: { phone_number: stale } });
    // A record connected to an agent that was deleted before its number was disconnected.
    await PhoneNumber.updateOne(
      { number: orphanNumber },
      { $set: { agent_id: '0123456789abcdef0123456789abcdef', connection_key: '0123456789abcdef0123456789abcdef' } },
    );

    expect(await listed(number)).to.include({ agent_id: connectedOnlyInRecord, agent_name: 'Crashed before the agent write' });
    expect(await listed(orphanNumber)).to.include({ agent_id: null });
    expect(await agentNumber(connectedOnlyInRecord)).to.equal(number);
    expect(await agentNumber(staleAgent)).to.equal(null);
  });

  it('keeps one number per agent when two numbers are connected to it at once', async () => {
    const [first, second] = [await claimed(), await claimed()];
    const agentId = await newAgent();
    const statuses = (await Promise.all([connect(first, agentId), connect(second, agentId)])).map((r) => r.status);
    expect(statuses).to.deep.equal([200, 200]);
    const holding = await PhoneNumber.find({ agent_id: agentId }).lean();
    expect(holding).to.have.length(1);
    expect(await agentNumber(agentId)).to.equal(holding[0]!.number);
  });

  it('answers 404 for another workspace’s agent or number, and 422 for a malformed agent id; nothing changes', async () => {
    const number = await claimed();
    const theirAgent = await newAgent('Theirs', rival);
    const theirNumber = await claimed(rival);
    const mine = await newAgent();
    const cases: [string, string, unknown, string][] = [
      ['their agent', number, theirAgent, 'agent not found'],
      ['no such agent', number, '0123456789abcdef0123456789abcdef', 'agent not found'],
      ['their number', theirNumber, mine, 'phone number not found'],
      ['a number nobody holds', providers.pool[39]!, mine, 'phone number not found'],
    ];
    for (const [label, n, agentId, detail] of cases) {
      const res = await connect(n, agentId);
      expect(res.status, label).to.equal(404);
      expect((await res.json()).detail, label).to.equal(detail);
    }
    expect((await disconnect(theirNumber)).status).to.equal(404);
    const bad = await connect(number, 'not-an-id');
    expect(bad.status).to.equal(422);
    expect((await bad.json()).detail[0].loc).to.deep.equal(['body', 'agent_id']);
    expect(await numberAgent(number)).to.equal(null);
    expect(await numberAgent(theirNumber)).to.equal(null);
    expect(await agentNumber(theirAgent, rival)).to.equal(null);
  });

  it('lets only numbers.manage connect and disconnect (admin yes; developer, viewer and keys 403)', async () => {
    const number = await claimed();
    const agentId = await newAgent();
    const admin = await memberWithRole(api, owner.workspaceId, 'admin');
    for (const caller of [
      await memberWithRole(api, owner.workspaceId, 'developer'),
      await memberWithRole(api, owner.workspaceId, 'viewer'),
      await apiKeyFor(owner.workspaceId),
    ]) {
      for (const res of [await connect(number, agentId, caller.headers), await disconnect(number, caller.headers)]) {
        expect(res.status).to.equal(403);
        expect((await res.json()).permission).to.equal('numbers.manage');
      }
    }
    expect(await numberAgent(number)).to.equal(null);
    expect((await connect(number, agentId, admin.headers)).status).to.equal(200);
    expect((await disconnect(number, admin.headers)).status).to.equal(200);
  });
});
