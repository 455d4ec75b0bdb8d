import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { ApiKey } from '../../../db/models/api-key';
import { Membership } from '../../../db/models/membership';
import { OAuthToken } from '../../../db/models/oauth-token';
import { issueOAuthToken, revokeOAuthToken } from '../../../api/auth/oauth-tokens';
import { hashSecretToken } from '../../../api/auth/secret-tokens';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, signUp, withJson, type SignedUp } from '../../support/accounts';

/** Keys and connected-app tokens as credentials: where they are accepted, and when they stop. */
describe('API keys and connected-app tokens as credentials', () => {
  let clock = Date.now();
  let api: RunningApi;
  let second: RunningApi;
  let owner: SignedUp;
  let headers: Record<string, string>;
  before(async () => {
    api = await startApi({ now: () => new Date(clock) });
    second = await startApi({ now: () => new Date(clock) }); // another API process on the same database
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  after(async () => {
    await api.close();
    await second.close();
  });
  afterEach(() => (clock = Date.now()));

  const newKey = async (name = 'ci'): Promise<{ id: string; key: string }> => (await api.request('/api/v1/keys', withJson('POST', { name }, headers))).json();
  const me = (h: Record<string, string>, on = api) => on.request('/api/v1/auth/me', { headers: h });

  describe('API keys', () => {
    it('work as X-API-Key and as Authorization: Bearer, without X-Workspace-ID, acting as a developer who can read billing', async () => {
      const { id, key } = await newKey('both ways');
      for (const h of [{ 'X-API-Key': key }, { Authorization: `Bearer ${key}` }, { authorization: `bearer ${key}` }] as Record<string, string>[]) {
        const res = await me(h);
        expect(res.status, JSON.stringify(h)).to.equal(200);
        const body = await res.json();
        expect(body.credential).to.deep.equal({ type: 'api_key', id, name: 'both ways' });
        expect(body.workspace.id).to.equal(owner.workspaceId);
        expect(body.permissions).to.have.members([
          'agents.view',
          'calls.view',
          'logs.view',
          'members.view',
          'agents.edit',
          'calls.place',
          'keys.manage',
          'billing.view',
        ]);
      }
      expect((await api.request('/api/v1/keys', { headers: { 'X-API-Key': key } })).status).to.equal(200);
    });

    it('ignore X-Workspace-ID: a key acts in its own workspace only', async () => {
      const { key } = await newKey('own workspace');
      const other = await activeOwner(api);
      const res = await api.request('/api/v1/keys', { headers: { 'X-API-Key': key, 'X-Workspace-ID': other.workspaceId } });
      expect(res.status).to.equal(200);
      const otherKey = await (
        await api.request('/api/v1/keys', withJson('POST', { name: 'other' }, { ...other.auth, 'X-Workspace-ID': other.workspaceId }))
      ).json();
      expect((await res.json()).map((k: { id: string }) => k.id)).not.to.include(otherKey.id);
    });

    it('answer 401 with WWW-Authenticate for a wrong key, and for X-API-Key without the key prefix', async () => {
      const { key } = await newKey();
      for (const h of [
        { 'X-API-Key': key.slice(4) },
        { 'X-API-Key': `vak_${'x'.repeat(43)}` },
        { Authorization: `Bearer ${key}x` },
        { 'X-API-Key': owner.token },
      ] as Record<string, string>[]) {
        const res = await me(h);
        expect(res.status, JSON.stringify(h)).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
        expect(res.headers.get('x-ratelimit-limit')).to.equal(null);
      }
    });

    it('stop at once when revoked: 401 on the very next request, in this process and in another', async () => {
      const { id, key } = await newKey('short-lived');
      expect((await me({ 'X-API-Key': key })).status).to.equal(200);
      expect((await me({ 'X-API-Key': key }, second)).status).to.equal(200);
      expect((await second.request(`/api/v1/keys/${id}`, { method: 'DELETE', headers })).status).to.equal(204);
      // Both processes hold the key's workspace (decision 0151), but every request reads the key.
      for (const on of [api, second]) {
        const res = await me({ 'X-API-Key': key }, on);
        expect(res.status).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
        expect(res.headers.get('x-ratelimit-limit')).to.equal(null);
      }
    });

    it('stop at once when their record is deleted, in every process', async () => {
      const { id, key } = await newKey('deleted');
      expect((await me({ 'X-API-Key': key })).status).to.equal(200);
      expect((await me({ 'X-API-Key': key }, second)).status).to.equal(200);
      await ApiKey.deleteOne({ _id: id });
      for (const on of [api, second]) expect((await me({ 'X-API-Key': key }, on)).status).to.equal(401);
    });

    it('get 403 on session-only endpoints', async () => {
      const { key } = await newKey();
      const res = await api.request('/api/v1/auth/logout', { method: 'POST', headers: { 'X-API-Key': key } });
      expect(res.status).to.equal(403);
      expect((await res.json()).detail).to.include('session');
      expect((await api.request('/api/v1/account', { headers: { Authorization: `Bearer ${key}` } })).status).to.equal(403);
    });
  });

  describe('connected-app (OAuth) tokens', () => {
    const issue = async (userId: string, ttlSeconds = 3600) =>
      issueOAuthToken({ workspaceId: owner.workspaceId, userId, clientId: 'client-1', clientName: 'Claude', ttlSeconds, now: new Date(clock) });

    it('are stored as a hash only and act as the connecting user with what both their role and a key allow', async () => {
      const { id, token } = await issue(owner.userId);
      expect(token).to.match(/^vao_[A-Za-z0-9_-]{43}$/);
      const stored = await OAuthToken.findById(id).lean();
      expect(stored?.token_hash).to.equal(hashSecretToken(token));
      expect(JSON.stringify(stored)).not.to.include(token);

      const res = await me({ Authorization: `Bearer ${token}` });
      expect(res.status).to.equal(200);
      const body = await res.json();
      expect(body.credential).to.deep.equal({ type: 'oauth', id, name: 'Claude' });
      expect(body.user.id).to.equal(owner.userId);
      expect(body.role).to.equal('owner');
      // An owner may manage members and KYC; a key may not, so neither may the owner's app.
      expect(body.permissions).to.have.members([
        'agents.view',
        'calls.view',
        'logs.view',
        'members.view',
        'agents.edit',
        'calls.place',
        'keys.manage',
        'billing.view',
      ]);
      expect((await api.request('/api/v1/keys', { headers: { Authorization: `Bearer ${token}` } })).status).to.equal(200);
      const rename = await api.request('/api/v1/workspace', withJson('PATCH', { name: 'renamed by an app' }, { Authorization: `Bearer ${token}` }));
      expect(rename.status).to.equal(403);
      expect(await rename.json()).to.include({ permission: 'members.manage' });
    });

    it("of a viewer cannot manage keys (the viewer's role limits them)", async () => {
      const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
      const { token } = await issue(viewer.userId);
      const res = await api.request('/api/v1/keys', { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).to.equal(403);
      expect(await res.json()).to.include({ permission: 'keys.manage' });
      expect((await me({ Authorization: `Bearer ${token}` })).status).to.equal(200);
    });

    it('are only accepted as Authorization: Bearer, not as X-API-Key', async () => {
      const { token } = await issue(owner.userId);
      expect((await me({ 'X-API-Key': token })).status).to.equal(401);
    });

    it('answer 401 once expired', async () => {
      const { token } = await issue(owner.userId, 60);
      expect((await me({ Authorization: `Bearer ${token}` })).status).to.equal(200);
      clock += 61_000;
      const res = await me({ Authorization: `Bearer ${token}` });
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
    });

    it('answer 401 at once when revoked, in every process', async () => {
      const { id, token } = await issue(owner.userId);
      expect((await me({ Authorization: `Bearer ${token}` }, second)).status).to.equal(200);
      expect(await revokeOAuthToken(id)).to.equal(true);
      expect(await revokeOAuthToken(id)).to.equal(false);
      expect((await me({ Authorization: `Bearer ${token}` })).status).to.equal(401);
      expect((await me({ Authorization: `Bearer ${token}` }, second)).status).to.equal(401);
    });

    it('answer 401 once the user has left the workspace', async () => {
      const person = await signUp(api);
      const membershipId = newId();
      await Membership.create({ _id: membershipId, workspace_id: owner.workspaceId, user_id: person.userId, role: 'developer', joined_at: new Date() });
      const { token } = await issue(person.userId);
      expect((await api.request('/api/v1/keys', { headers: { Authorization: `Bearer ${token}` } })).status).to.equal(200);
      await Membership.deleteOne({ _id: membershipId });
      for (const path of ['/api/v1/keys', '/api/v1/auth/me']) {
        const res = await api.request(path, { headers: { Authorization: `Bearer ${token}` } });
        expect(res.status, path).to.equal(401);
      }
    });

    it('get 403 on session-only endpoints', async () => {
      const { token } = await issue(owner.userId);
      for (const [method, path] of [
        ['POST', '/api/v1/auth/logout'],
        ['GET', '/api/v1/account'],
      ]) {
        const res = await api.request(path, { method, headers: { Authorization: `Bearer ${token}` } });
        expect(res.status, path).to.equal(403);
        expect((await res.json()).detail).to.include('connected apps');
      }
    });
  });
});
