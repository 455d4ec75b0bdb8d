import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { Batch } from '../../../db/models/batch';
import { Call } from '../../../db/models/call';
import { PhoneNumber, freeConnectionKey } from '../../../db/models/phone-number';
import { API_KEY_PERMISSIONS, ROLE_PERMISSIONS, type Permission } from '../../../domain/accounts/permissions';
import { searchableKinds, SEARCH_KINDS } from '../../../api/observability/search';
import { emptyCounts } from '../../../contracts/batches';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { expectQueryIssue, getOk, type Headers } from './helpers';

/** A workspace's records to search: an agent (over the API), and a call, a number and a batch written directly (test data). */
async function seedWorkspace(api: RunningApi, owner: SignedUp, label: string) {
  const headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  const agentRes = await api.request('/api/v1/agents', withJson('POST', { name: `Diwali ${label}` }, headers));
  expect(agentRes.status, await agentRes.clone().text()).to.equal(201);
  const agent = await agentRes.json();
  const at = new Date();
  const callId = newId();
  await Call.create({
    _id: callId,
    workspace_id: owner.workspaceId,
    agent_id: agent.id,
    agent_name: agent.name,
    direction: 'outbound',
    to_number: '+919876543210',
    from_number: '+918000000001',
    status: 'completed',
    created_at: at,
    updated_at: at,
  });
  const numberId = newId();
  const number = `+9180${Math.floor(Math.random() * 1e8)
    .toString()
    .padStart(8, '0')}`;
  await PhoneNumber.create({
    _id: numberId,
    number,
    workspace_id: owner.workspaceId,
    connection_key: freeConnectionKey(numberId),
    region: `Mumbai ${label}`,
    claimed_at: at,
    claimed_by: 'test',
  });
  const batchId = newId();
  await Batch.create({
    _id: batchId,
    workspace_id: owner.workspaceId,
    name: `Diwali reminders ${label}`,
    agent_id: agent.id,
    agent_name: agent.name,
    from_number: '+918000000001',
    status: 'running',
    retry: { max_attempts: 1, spacing_seconds: 600 },
    number_column: 'phone',
    contacts_total: 0,
    counts: emptyCounts(),
    created_at: at,
    updated_at: at,
  });
  return { headers, agentId: agent.id as string, callId, numberId, number, batchId };
}

/**
 * `GET /search?q=`: agents, calls, phone numbers and batches of the caller's workspace only,
 * only the kinds its permissions allow, a per-kind cap, and bounds on `q`.
 */
describe('search', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let mine: Awaited<ReturnType<typeof seedWorkspace>>;
  let theirs: Awaited<ReturnType<typeof seedWorkspace>>;
  let headers: Headers;

  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
    mine = await seedWorkspace(api, owner, 'North');
    theirs = await seedWorkspace(api, await activeOwner(api), 'South');
    headers = mine.headers;
  });
  after(() => api.close());

  const search = (query: string, h = headers) => getOk(api, `/api/v1/search?${query}`, h);
  const ids = (items: { id: string }[] | undefined) => (items ?? []).map((item) => item.id);

  it('finds agents and batches by name, case-insensitively, only in the workspace', async () => {
    const body = await search('q=DIWALI');
    expect(body.q).to.equal('DIWALI');
    expect(body.kinds).to.deep.equal(['agents', 'calls', 'phone_numbers', 'batches']);
    expect(ids(body.agents)).to.deep.equal([mine.agentId]);
    expect(body.agents[0]).to.include({ name: 'Diwali North', status: 'active', phone_number: null });
    expect(ids(body.batches)).to.deep.equal([mine.batchId]);
    expect(body.batches[0]).to.include({ name: 'Diwali reminders North', agent_id: mine.agentId, status: 'running' });
    expect(ids(body.calls)).to.deep.equal([mine.callId]); // by the call's agent name
    expect(JSON.stringify(body)).not.to.include(theirs.agentId).and.not.to.include(theirs.batchId).and.not.to.include(theirs.callId);
  });

  it('finds calls and numbers by a number written with spaces or dashes, and records by their id', async () => {
    const byNumber = await search(`q=${encodeURIComponent('98765 43210')}`);
    expect(ids(byNumber.calls)).to.deep.equal([mine.callId]);
    expect(byNumber.calls[0]).to.include({ to_number: '+919876543210', direction: 'outbound', status: 'completed', agent_id: mine.agentId });
    const ownNumber = await search(`q=${encodeURIComponent(mine.number.slice(3, 6) + '-' + mine.number.slice(6))}`);
    expect(ids(ownNumber.phone_numbers)).to.deep.equal([mine.numberId]);
    expect(ids((await search(`q=${encodeURIComponent(theirs.number)}`)).phone_numbers)).to.deep.equal([]);
    expect(ids((await search(`q=${mine.callId}`)).calls)).to.deep.equal([mine.callId]);
    expect(ids((await search(`q=${theirs.callId}`)).calls)).to.deep.equal([]);
    expect(ids((await search(`q=${mine.batchId}`)).batches)).to.deep.equal([mine.batchId]);
    expect(ids((await search('q=mumbai north')).phone_numbers)).to.deep.equal([mine.numberId]);
  });

  it('narrows to the kinds asked for, caps each kind at limit (default 5, 1 to 20), newest first', async () => {
    for (let i = 0; i < 6; i += 1) {
      expect((await api.request('/api/v1/agents', withJson('POST', { name: `Capped ${i}` }, headers))).status).to.equal(201);
    }
    const agentsOnly = await search('q=capped&kinds=agents');
    expect(agentsOnly.kinds).to.deep.equal(['agents']);
    expect(Object.keys(agentsOnly).sort()).to.deep.equal(['agents', 'kinds', 'q']);
    expect(agentsOnly.agents).to.have.length(5);
    expect(agentsOnly.agents[0].name).to.equal('Capped 5');
    expect((await search('q=capped&kinds=agents&limit=2')).agents.map((a: { name: string }) => a.name)).to.deep.equal(['Capped 5', 'Capped 4']);
    expect((await search('q=capped&kinds=agents&limit=20')).agents).to.have.length(6);
    expect((await search('q=capped&kinds=calls,batches')).kinds).to.deep.equal(['calls', 'batches']);
  });

  it('takes any text safely (no pattern syntax) and trims it', async () => {
    const body = await search(`q=${encodeURIComponent('  (+91.*  ')}`);
    expect(body.q).to.equal('(+91.*');
    expect(body.agents).to.deep.equal([]);
  });

  it('answers 422 at each bound of its query', async () => {
    const bad: [string, string][] = [
      ['', 'q'],
      ['q=a', 'q'],
      [`q=${'a'.repeat(81)}`, 'q'],
      [`q=${encodeURIComponent('  a  ')}`, 'q'],
      ['q=ab&limit=0', 'limit'],
      ['q=ab&limit=21', 'limit'],
      ['q=ab&kinds=users', 'kinds'],
    ];
    for (const [query, field] of bad) await expectQueryIssue(await api.request(`/api/v1/search?${query}`, { headers }), field);
    expect((await api.request(`/api/v1/search?q=${'a'.repeat(80)}&limit=20`, { headers })).status).to.equal(200);
    expect((await api.request('/api/v1/search?q=ab')).status).to.equal(401);
  });

  it('serves every role and API keys, with the kinds their permissions read', async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect(ids((await search('q=diwali', viewer.headers)).agents)).to.deep.equal([mine.agentId]);
    const key = await apiKeyFor(owner.workspaceId);
    expect((await search('q=diwali', key.headers)).kinds).to.deep.equal([...SEARCH_KINDS]);
    // Every role of the table reads all four kinds today; a permission set without calls.view
    // would search agents and numbers only.
    for (const permissions of [...Object.values(ROLE_PERMISSIONS), API_KEY_PERMISSIONS])
      expect(searchableKinds(undefined, permissions)).to.deep.equal([...SEARCH_KINDS]);
    expect(searchableKinds(undefined, new Set<Permission>(['agents.view']))).to.deep.equal(['agents', 'phone_numbers']);
    expect(searchableKinds(['calls'], new Set<Permission>(['agents.view']))).to.deep.equal([]);
  });
});
