import { expect } from 'chai';
import { ApiKey } from '../../../db/models/api-key';
import { RateWindow, rateWindowId } from '../../../db/models/rate-window';
import { AuditEvent } from '../../../db/models/audit-event';
import { Workspace } from '../../../db/models/workspace';
import { hashSecretToken } from '../../../api/auth/secret-tokens';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, withJson, type SignedUp } from '../../support/accounts';

/** POST /keys, GET /keys, DELETE /keys/{key_id}: shapes, bounds, who may, and what is stored. */
describe('API keys: create, list, revoke', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Record<string, string>;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  after(() => api.close());

  const create = (name: unknown, h = headers) => api.request('/api/v1/keys', withJson('POST', { name }, h));
  const list = async (h = headers) => (await api.request('/api/v1/keys', { headers: h })).json();

  it('creates a key: 201 with the full key once, under a fixed prefix; only its SHA-256 is stored', async () => {
    const res = await create('  CI deploys  ');
    expect(res.status).to.equal(201);
    const body = await res.json();
    expect(Object.keys(body).sort()).to.deep.equal(['created_at', 'created_by', 'id', 'key', 'last_used_at', 'name', 'prefix']);
    expect(body).to.include({ name: 'CI deploys', created_by: 'Asha Rao', last_used_at: null });
    expect(body.id).to.match(/^[0-9a-f]{32}$/);
    expect(body.key).to.match(/^vak_[A-Za-z0-9_-]{43}$/);
    expect(body.prefix).to.equal(body.key.slice(0, 12));
    expect(body.created_at).to.match(/\+05:30$/);

    const stored = await ApiKey.findById(body.id).lean();
    expect(stored?.key_hash).to.equal(hashSecretToken(body.key));
    expect(JSON.stringify(stored)).not.to.include(body.key);
  });

  it('never shows the full key again: the list has name, prefix, creator and last use, newest first', async () => {
    const first = await (await create('first')).json();
    const second = await (await create('second')).json();
    const keys = await list();
    expect(keys.slice(0, 2).map((k: { id: string }) => k.id)).to.deep.equal([second.id, first.id]);
    for (const k of keys) {
      expect(Object.keys(k).sort()).to.deep.equal(['created_at', 'created_by', 'id', 'last_used_at', 'name', 'prefix']);
    }
    expect(JSON.stringify(keys)).not.to.include(first.key).and.not.to.include(second.key).and.not.to.include(hashSecretToken(first.key));
  });

  it('shows when a key was last used', async () => {
    const { id, key } = await (await create('used')).json();
    expect((await api.request('/api/v1/auth/me', { headers: { 'X-API-Key': key } })).status).to.equal(200);
    const listed = (await list()).find((k: { id: string }) => k.id === id);
    expect(Date.now() - Date.parse(listed.last_used_at)).to.be.within(0, 60_000);
  });

  it('shows the last use recorded before counts moved onto keys, for a key not used since', async () => {
    const { id } = await (await create('used long ago')).json();
    const before = new Date(Date.now() - 3_600_000);
    await ApiKey.collection.updateOne({ _id: id as never }, { $unset: { last_used_at: 1 } });
    await RateWindow.create({ _id: rateWindowId('api_key', id), counts: {}, last_used_at: before });
    const listed = (await list()).find((k: { id: string }) => k.id === id);
    expect(Date.parse(listed.last_used_at)).to.equal(before.getTime());
  });

  const bad: [string, unknown, string][] = [
    ['an empty name', { name: '' }, 'string_too_short'],
    ['a 101-character name', { name: 'k'.repeat(101) }, 'string_too_long'],
    ['a blank name', { name: '   ' }, 'string_pattern_mismatch'],
    ['a missing name', {}, 'missing'],
    ['an unknown field', { name: 'ok', scopes: ['all'] }, 'extra_forbidden'],
  ];
  for (const [what, body, type] of bad) {
    it(`answers 422 ${type} for ${what}, and creates nothing`, async () => {
      const before = await ApiKey.countDocuments({ workspace_id: owner.workspaceId });
      const res = await api.request('/api/v1/keys', withJson('POST', body, headers));
      expect(res.status).to.equal(422);
      expect((await res.json()).detail.map((d: { type: string }) => d.type)).to.include(type);
      expect(await ApiKey.countDocuments({ workspace_id: owner.workspaceId })).to.equal(before);
    });
  }

  it('accepts names of exactly 1 and 100 characters', async () => {
    expect((await create('k')).status).to.equal(201);
    expect((await create('k'.repeat(100))).status).to.equal(201);
  });

  it('records key.created and key.revoked in the audit log with the actor and the key', async () => {
    const { id } = await (await create('audited')).json();
    expect((await api.request(`/api/v1/keys/${id}`, { method: 'DELETE', headers })).status).to.equal(204);
    const events = await AuditEvent.find({ workspace_id: owner.workspaceId, 'target.id': id }).sort({ at: 1 }).lean();
    expect(events.map((e) => e.action)).to.deep.equal(['key.created', 'key.revoked']);
    for (const e of events) {
      expect(e.actor).to.deep.include({ type: 'user', id: owner.userId, name: 'Asha Rao' });
      expect(e.target).to.deep.equal({ type: 'api_key', id, name: 'audited' });
      expect(e.ip).to.be.a('string');
    }
  });

  it("revokes: 204, gone from the list; a second revoke, an unknown id and another workspace's key are 404", async () => {
    const { id } = await (await create('to revoke')).json();
    const del = (keyId: string, h = headers) => api.request(`/api/v1/keys/${keyId}`, { method: 'DELETE', headers: h });
    expect((await del(id)).status).to.equal(204);
    expect((await list()).map((k: { id: string }) => k.id)).not.to.include(id);
    const again = await del(id);
    expect(again.status).to.equal(404);
    expect(await again.json()).to.deep.equal({ detail: 'key not found' });
    expect((await del('0123456789abcdef0123456789abcdef')).status).to.equal(404);

    const other = await activeOwner(api);
    const theirs = await (await create('theirs', { ...other.auth, 'X-Workspace-ID': other.workspaceId })).json();
    expect((await del(theirs.id)).status).to.equal(404);
    expect(await ApiKey.findById(theirs.id, { revoked_at: 1 }).lean()).to.include({ revoked_at: null });
    expect((await list()).map((k: { id: string }) => k.id)).not.to.include(theirs.id);
  });

  it('answers 422 for a key id that is not 32 hex characters', async () => {
    const res = await api.request('/api/v1/keys/not-an-id', { method: 'DELETE', headers });
    expect(res.status).to.equal(422);
    expect((await res.json()).detail[0]).to.include({ type: 'string_pattern_mismatch' });
  });

  it('a key may manage keys; one it creates is credited to key:<name>', async () => {
    const { key } = await (await create('automation')).json();
    const res = await create('made by a key', { Authorization: `Bearer ${key}` });
    expect(res.status).to.equal(201);
    expect((await res.json()).created_by).to.equal('key:automation');
    const listed = await list({ 'X-API-Key': key });
    expect(listed.map((k: { name: string }) => k.name)).to.include.members(['automation', 'made by a key']);
  });

  it('needs keys.manage: a viewer gets 403 naming it, a developer may', async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const denied = await create('nope', viewer.headers);
    expect(denied.status).to.equal(403);
    expect(await denied.json()).to.include({ permission: 'keys.manage' });
    const developer = await memberWithRole(api, owner.workspaceId, 'developer');
    expect((await create('dev key', developer.headers)).status).to.equal(201);
  });

  it('is not an onboarding endpoint: 403 workspace_inactive before activation', async () => {
    const fresh = await activeOwner(api);
    const { key } = await (await create('before', { ...fresh.auth, 'X-Workspace-ID': fresh.workspaceId })).json();
    await Workspace.updateOne({ _id: fresh.workspaceId }, { $set: { status: 'onboarding' } });
    const res = await api.request('/api/v1/keys', { headers: { 'X-API-Key': key } });
    expect(res.status).to.equal(403);
    expect(await res.json()).to.include({ code: 'workspace_inactive' });
  });
});
