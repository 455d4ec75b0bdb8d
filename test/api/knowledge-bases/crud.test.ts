import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { Agent } from '../../../db/models/agent';
import { KnowledgeBase } from '../../../db/models/knowledge-base';
import { missingKnowledgeBases } from '../../../domain/knowledge/bases';
import { MAX_KNOWLEDGE_BASES_PER_WORKSPACE } from '../../../api/routes/knowledge-bases';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { createBase, storedCounts, uploadText } from './fixtures';

describe('knowledge bases: create, list, get, delete', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
  });
  after(() => api.close());

  const create = (body: unknown, headers = owner.auth) => api.request('/api/v1/knowledge-bases', withJson('POST', body, headers));
  const get = (id: string, headers = owner.auth) => api.request(`/api/v1/knowledge-bases/${id}`, { headers });
  const remove = (id: string, headers = owner.auth) => api.request(`/api/v1/knowledge-bases/${id}`, { method: 'DELETE', headers });

  it('creates a base and shows it by id and in the list, newest first, with its counts', async () => {
    const fresh = await activeOwner(api, { name: 'Meera Iyer' });
    const first = await create({ name: 'Returns', description: 'How returns work' }, fresh.auth);
    expect(first.status).to.equal(201);
    const base = await first.json();
    expect(base).to.include({ name: 'Returns', description: 'How returns work', document_count: 0, chunk_count: 0, created_by: 'Meera Iyer' });
    expect(base.id).to.match(/^[0-9a-f]{32}$/);
    expect(base.created_at).to.match(/\+05:30$/);
    expect(base.updated_at).to.equal(base.created_at);

    const second = await (await create({ name: 'Shipping' }, fresh.auth)).json();
    expect(second.description).to.equal('');
    await uploadText(api, fresh.auth, second.id, 'shipping.txt', 'Orders ship within a day.');

    const list = await (await api.request('/api/v1/knowledge-bases', { headers: fresh.auth })).json();
    expect(list.map((b: { id: string }) => b.id)).to.deep.equal([second.id, base.id]);
    expect(list[0]).to.include({ document_count: 1, chunk_count: 1 });
    const one = await (await get(second.id, fresh.auth)).json();
    expect(one).to.include({ id: second.id, name: 'Shipping', document_count: 1, chunk_count: 1 });
    expect(one.updated_at).not.to.equal(one.created_at);
  });

  it('trims the name and description', async () => {
    const base = await (await create({ name: '  FAQ  ', description: ' answers ' })).json();
    expect(base).to.include({ name: 'FAQ', description: 'answers' });
  });

  it('takes names of 1 and 120 characters and refuses empty, blank and 121, storing nothing', async () => {
    expect((await create({ name: 'a' })).status).to.equal(201);
    expect((await create({ name: 'n'.repeat(120) })).status).to.equal(201);
    const before = await KnowledgeBase.countDocuments({ workspace_id: owner.workspaceId });
    for (const [name, type] of [
      ['', 'string_too_short'],
      ['   ', 'string_pattern_mismatch'],
      ['n'.repeat(121), 'string_too_long'],
    ] as const) {
      const res = await create({ name });
      expect(res.status, name).to.equal(422);
      const [issue] = (await res.json()).detail;
      expect(issue).to.deep.include({ type, loc: ['body', 'name'], input: name });
      expect(issue.msg).to.be.a('string');
    }
    expect(await KnowledgeBase.countDocuments({ workspace_id: owner.workspaceId })).to.equal(before);
  });

  it('takes a description of 1000 characters and refuses 1001', async () => {
    expect((await create({ name: 'long', description: 'd'.repeat(1000) })).status).to.equal(201);
    const res = await create({ name: 'longer', description: 'd'.repeat(1001) });
    expect(res.status).to.equal(422);
    expect((await res.json()).detail[0]).to.include({ type: 'string_too_long' });
  });

  it('refuses a missing name and unknown fields', async () => {
    const res = await create({ description: 'x', colour: 'blue' });
    expect(res.status).to.equal(422);
    const types = (await res.json()).detail.map((d: { type: string }) => d.type);
    expect(types).to.include.members(['missing', 'extra_forbidden']);
  });

  it(`keeps at most ${MAX_KNOWLEDGE_BASES_PER_WORKSPACE} bases per workspace (409 beyond)`, async () => {
    const fresh = await activeOwner(api);
    const at = new Date();
    await KnowledgeBase.insertMany(
      Array.from({ length: MAX_KNOWLEDGE_BASES_PER_WORKSPACE - 1 }, (_, i) => ({
        _id: newId(),
        workspace_id: fresh.workspaceId,
        name: `base ${i}`,
        revision: newId(),
        created_by: { name: 'test' },
        created_at: at,
        updated_at: at,
      })),
    );
    expect((await create({ name: 'the last one' }, fresh.auth)).status).to.equal(201);
    const over = await create({ name: 'one too many' }, fresh.auth);
    expect(over.status).to.equal(409);
    expect((await over.json()).detail).to.include(`at most ${MAX_KNOWLEDGE_BASES_PER_WORKSPACE}`);
  });

  it("answers 404 for another workspace's base on every path, and changes nothing", async () => {
    const base = await createBase(api, owner.auth, 'private');
    await uploadText(api, owner.auth, base.id, 'a.txt', 'Secret pricing for partners.');
    const stranger = await activeOwner(api);
    const [document] = await (await api.request(`/api/v1/knowledge-bases/${base.id}/documents`, { headers: owner.auth })).json();
    const attempts: [string, RequestInit][] = [
      [`/api/v1/knowledge-bases/${base.id}`, { headers: stranger.auth }],
      [`/api/v1/knowledge-bases/${base.id}`, { method: 'DELETE', headers: stranger.auth }],
      [`/api/v1/knowledge-bases/${base.id}/documents`, { headers: stranger.auth }],
      [`/api/v1/knowledge-bases/${base.id}/documents/${document.id}`, { method: 'DELETE', headers: stranger.auth }],
      [`/api/v1/knowledge-bases/${base.id}/search`, withJson('POST', { query: 'pricing' }, stranger.auth)],
    ];
    for (const [path, init] of attempts) {
      const res = await api.request(path, init);
      expect(res.status, `${init.method ?? 'GET'} ${path}`).to.equal(404);
    }
    const list = await (await api.request('/api/v1/knowledge-bases', { headers: stranger.auth })).json();
    expect(list).to.deep.equal([]);
    expect((await get(base.id)).status).to.equal(200);
    expect(await storedCounts(base.id)).to.deep.equal({ slots: 1, documents: 1, groups: 1 });
  });

  it('answers 404 for an unknown id and 422 for an id that is not one', async () => {
    expect((await get(newId())).status).to.equal(404);
    expect((await remove(newId())).status).to.equal(404);
    const bad = await get('not-an-id');
    expect(bad.status).to.equal(422);
    expect((await bad.json()).detail[0].loc).to.deep.equal(['path', 'kb_id']);
  });

  it('deletes a base with its documents and chunks', async () => {
    const base = await createBase(api, owner.auth, 'to delete');
    await uploadText(api, owner.auth, base.id, 'a.txt', 'First document.');
    await uploadText(api, owner.auth, base.id, 'b.txt', 'Second document.');
    expect(await storedCounts(base.id)).to.deep.equal({ slots: 2, documents: 2, groups: 2 });
    expect((await remove(base.id)).status).to.equal(204);
    expect((await get(base.id)).status).to.equal(404);
    expect(await storedCounts(base.id)).to.deep.equal({ slots: 0, documents: 0, groups: 0 });
    expect((await remove(base.id)).status).to.equal(404);
  });

  it('refuses to delete a base agents use (409 naming them) and deletes it once none does', async () => {
    const base = await createBase(api, owner.auth, 'in use');
    const other = await createBase(api, owner.auth, 'unused');
    // Arranged directly: only the fields this rule reads (the agent API has its own tests).
    const agentIds = [newId(), newId()];
    await Agent.collection.insertMany([
      { _id: agentIds[0], workspace_id: owner.workspaceId, name: 'Sales line', knowledge_base_ids: [other.id, base.id] },
      { _id: agentIds[1], workspace_id: owner.workspaceId, name: 'Support line', knowledge_base_ids: [base.id] },
    ] as never[]);
    const refused = await remove(base.id);
    expect(refused.status).to.equal(409);
    const { detail } = await refused.json();
    expect(detail).to.include('"Sales line"').and.to.include('"Support line"').and.to.include(agentIds[0]);
    expect((await get(base.id)).status).to.equal(200);

    await Agent.deleteMany({ _id: { $in: agentIds } });
    expect((await remove(base.id)).status).to.equal(204);
    await Agent.collection.insertOne({ _id: newId(), workspace_id: newId(), name: 'Elsewhere', knowledge_base_ids: [other.id] } as never);
    expect((await remove(other.id)).status, "another workspace's agent does not hold the base").to.equal(204);
  });

  it('lets viewers and keys read; creating and deleting needs agents.edit', async () => {
    const base = await createBase(api, owner.auth, 'shared');
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect((await get(base.id, viewer.headers)).status).to.equal(200);
    expect((await api.request('/api/v1/knowledge-bases', { headers: viewer.headers })).status).to.equal(200);
    const denied = await create({ name: 'nope' }, viewer.headers);
    expect(denied.status).to.equal(403);
    expect((await denied.json()).permission).to.equal('agents.edit');
    expect((await remove(base.id, viewer.headers)).status).to.equal(403);

    const key = await apiKeyFor(owner.workspaceId, 'builder');
    const created = await create({ name: 'by key' }, key.headers);
    expect(created.status).to.equal(201);
    expect((await created.json()).created_by).to.equal('key:builder');
  });
});

describe('missingKnowledgeBases', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  it("answers the ids that are not the workspace's bases, each once, in the order given", async () => {
    const owner = await activeOwner(api);
    const stranger = await activeOwner(api);
    const mine = await createBase(api, owner.auth, 'mine');
    const theirs = await createBase(api, stranger.auth, 'theirs');
    const unknown = newId();
    expect(await missingKnowledgeBases(owner.workspaceId, [mine.id])).to.deep.equal([]);
    expect(await missingKnowledgeBases(owner.workspaceId, [])).to.deep.equal([]);
    expect(await missingKnowledgeBases(owner.workspaceId, [unknown, mine.id, theirs.id, unknown, 'not-an-id'])).to.deep.equal([
      unknown,
      theirs.id,
      'not-an-id',
    ]);
    await api.request(`/api/v1/knowledge-bases/${mine.id}`, { method: 'DELETE', headers: owner.auth });
    expect(await missingKnowledgeBases(owner.workspaceId, [mine.id])).to.deep.equal([mine.id]);
  });
});
