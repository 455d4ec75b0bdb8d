import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { AuditEvent } from '../../../db/models/audit-event';
import { Membership } from '../../../db/models/membership';
import { Workspace } from '../../../db/models/workspace';
import { startApi, type RunningApi } from '../../support/api';
import { memberWithRole, signUp, withJson } from '../../support/accounts';

describe('workspace and members', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  it('GET /workspace answers the workspace and the caller role, also while onboarding', async () => {
    const owner = await signUp(api, { workspace_name: 'Acme' });
    const res = await api.request('/api/v1/workspace', { headers: owner.auth });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.include({ id: owner.workspaceId, name: 'Acme', status: 'onboarding', role: 'owner' });
  });

  it('X-Workspace-ID picks among the workspaces; the first is the default; others are 404; garbage is 400', async () => {
    const a = await signUp(api, { workspace_name: 'First' });
    const b = await signUp(api, { workspace_name: 'Second' });
    await memberWithRole(api, b.workspaceId, 'viewer');
    // a joins b's workspace later: a's own stays the default.
    await Membership.create({ _id: newId(), workspace_id: b.workspaceId, user_id: a.userId, role: 'viewer', joined_at: new Date() });
    expect((await (await api.request('/api/v1/workspace', { headers: a.auth })).json()).name).to.equal('First');
    const chosen = await (await api.request('/api/v1/workspace', { headers: { ...a.auth, 'X-Workspace-ID': b.workspaceId } })).json();
    expect(chosen).to.include({ name: 'Second', role: 'viewer' });
    const stranger = await signUp(api);
    expect((await api.request('/api/v1/workspace', { headers: { ...a.auth, 'X-Workspace-ID': stranger.workspaceId } })).status).to.equal(404);
    expect((await api.request('/api/v1/workspace', { headers: { ...a.auth, 'X-Workspace-ID': 'nope' } })).status).to.equal(400);
  });

  it('answers 400 when the person belongs to no workspace', async () => {
    const lonely = await signUp(api);
    await Membership.deleteMany({ user_id: lonely.userId });
    const res = await api.request('/api/v1/workspace', { headers: lonely.auth });
    expect(res.status).to.equal(400);
    expect((await res.json()).detail).to.match(/no workspace/);
    expect((await api.request('/api/v1/account', { headers: lonely.auth })).status).to.equal(200);
  });

  it('PATCH /workspace renames for owners and admins; a developer gets 403 naming members.manage', async () => {
    const owner = await signUp(api);
    const admin = await memberWithRole(api, owner.workspaceId, 'admin');
    const developer = await memberWithRole(api, owner.workspaceId, 'developer');
    expect((await api.request('/api/v1/workspace', withJson('PATCH', { name: 'Renamed' }, admin.headers))).status).to.equal(200);
    const denied = await api.request('/api/v1/workspace', withJson('PATCH', { name: 'Nope' }, developer.headers));
    expect(denied.status).to.equal(403);
    expect((await denied.json()).detail).to.include('members.manage');
    for (const bad of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 'ok', status: 'active' }]) {
      expect((await api.request('/api/v1/workspace', withJson('PATCH', bad, owner.auth))).status, JSON.stringify(bad)).to.equal(422);
    }
    expect((await (await api.request('/api/v1/workspace', { headers: owner.auth })).json()).name).to.equal('Renamed');
  });

  it('compliance.india_calling_hours (0207): on for a new workspace, off for one created before, changed alone by PATCH /workspace and audited', async () => {
    const owner = await signUp(api, { workspace_name: 'Compliant' });
    const read = async () =>
      (await (await api.request('/api/v1/workspace', { headers: owner.auth })).json()) as { name: string; compliance: { india_calling_hours: boolean } };
    expect((await read()).compliance).to.deep.equal({ india_calling_hours: true });
    const off = await api.request('/api/v1/workspace', withJson('PATCH', { compliance: { india_calling_hours: false } }, owner.auth));
    expect(off.status, await off.clone().text()).to.equal(200);
    expect(await read()).to.deep.include({ name: 'Compliant', compliance: { india_calling_hours: false } });
    const audits = await AuditEvent.find({ workspace_id: owner.workspaceId, action: 'workspace.compliance_changed' }).lean();
    expect(audits.map((a) => a.details)).to.deep.equal([{ india_calling_hours: { from: true, to: false } }]);
    expect(await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'workspace.renamed' })).to.equal(0);
    expect((await api.request('/api/v1/workspace', withJson('PATCH', { compliance: { india_calling_hours: 'yes' } }, owner.auth))).status).to.equal(422);
    // A workspace stored before the setting existed reads as off.
    await Workspace.updateOne({ _id: owner.workspaceId }, { $unset: { compliance: 1 } });
    expect((await read()).compliance).to.deep.equal({ india_calling_hours: false });
  });

  it('GET /members lists every member oldest first', async () => {
    const owner = await signUp(api, { name: 'The Owner' });
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    const list = await (await api.request('/api/v1/members', { headers: viewer.headers })).json();
    expect(list.map((m: { user_id: string; role: string }) => [m.user_id, m.role])).to.deep.equal([
      [owner.userId, 'owner'],
      [viewer.userId, 'viewer'],
    ]);
    expect(list[0]).to.include({ name: 'The Owner', email: owner.email });
  });

  describe('PATCH /members/{user_id}', () => {
    it('changes a role and records it in the audit log', async () => {
      const owner = await signUp(api);
      const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
      const res = await api.request(`/api/v1/members/${viewer.userId}`, withJson('PATCH', { role: 'developer' }, owner.auth));
      expect(res.status).to.equal(200);
      expect((await res.json()).role).to.equal('developer');
      const event = await AuditEvent.findOne({ workspace_id: owner.workspaceId, action: 'member.role_changed' }).lean();
      expect(event).to.deep.include({ actor: { type: 'user', id: owner.userId, name: 'Asha Rao' }, details: { from: 'viewer', to: 'developer' } });
      expect(event?.target?.id).to.equal(viewer.userId);
      expect(event?.ip).to.be.a('string');
    });

    it('answers 400 when the last owner would lose the role, and keeps the owner', async () => {
      const owner = await signUp(api);
      const res = await api.request(`/api/v1/members/${owner.userId}`, withJson('PATCH', { role: 'admin' }, owner.auth));
      expect(res.status).to.equal(400);
      expect((await res.json()).detail).to.match(/always needs an owner/);
      expect((await Membership.findOne({ user_id: owner.userId, workspace_id: owner.workspaceId }).lean())?.role).to.equal('owner');
    });

    it('lets an owner step down once another owner exists', async () => {
      const owner = await signUp(api);
      const second = await memberWithRole(api, owner.workspaceId, 'admin');
      expect((await api.request(`/api/v1/members/${second.userId}`, withJson('PATCH', { role: 'owner' }, owner.auth))).status).to.equal(200);
      expect((await api.request(`/api/v1/members/${owner.userId}`, withJson('PATCH', { role: 'viewer' }, owner.auth))).status).to.equal(200);
    });

    it('an admin cannot make or unmake owners (403)', async () => {
      const owner = await signUp(api);
      const admin = await memberWithRole(api, owner.workspaceId, 'admin');
      const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
      expect((await api.request(`/api/v1/members/${viewer.userId}`, withJson('PATCH', { role: 'owner' }, admin.headers))).status).to.equal(403);
      expect((await api.request(`/api/v1/members/${owner.userId}`, withJson('PATCH', { role: 'viewer' }, admin.headers))).status).to.equal(403);
      expect((await api.request(`/api/v1/members/${viewer.userId}`, withJson('PATCH', { role: 'admin' }, admin.headers))).status).to.equal(200);
    });

    it('answers 404 for someone outside the workspace, and 422 for bad input, changing nothing', async () => {
      const owner = await signUp(api);
      const stranger = await signUp(api);
      expect((await api.request(`/api/v1/members/${stranger.userId}`, withJson('PATCH', { role: 'viewer' }, owner.auth))).status).to.equal(404);
      const member = await memberWithRole(api, owner.workspaceId, 'viewer');
      for (const [path, body, loc] of [
        [`/api/v1/members/${member.userId}`, { role: 'superuser' }, ['body', 'role']],
        [`/api/v1/members/${member.userId}`, {}, ['body', 'role']],
        [`/api/v1/members/${member.userId}`, { role: 'admin', extra: 1 }, ['body', 'extra']],
        ['/api/v1/members/not-an-id', { role: 'admin' }, ['path', 'user_id']],
      ] as const) {
        const res = await api.request(path, withJson('PATCH', body, owner.auth));
        expect(res.status).to.equal(422);
        expect((await res.json()).detail.map((d: { loc: unknown }) => d.loc)).to.deep.include(loc);
      }
      expect((await Membership.findOne({ user_id: member.userId, workspace_id: owner.workspaceId }).lean())?.role).to.equal('viewer');
      expect(await Membership.countDocuments({ user_id: stranger.userId, workspace_id: owner.workspaceId })).to.equal(0);
    });
  });

  describe('DELETE /members/{user_id}', () => {
    it('removes a member at once (their session no longer reaches the workspace)', async () => {
      const owner = await signUp(api);
      const dev = await memberWithRole(api, owner.workspaceId, 'developer');
      const res = await api.request(`/api/v1/members/${dev.userId}`, { method: 'DELETE', headers: owner.auth });
      expect(res.status).to.equal(204);
      expect((await api.request('/api/v1/members', { headers: dev.headers })).status).to.equal(404);
      expect(await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'member.removed', 'target.id': dev.userId })).to.equal(1);
    });

    it('answers 400 for the last owner, 403 for an admin removing an owner, 404 for a stranger', async () => {
      const owner = await signUp(api);
      const admin = await memberWithRole(api, owner.workspaceId, 'admin');
      const stranger = await signUp(api);
      expect((await api.request(`/api/v1/members/${owner.userId}`, { method: 'DELETE', headers: owner.auth })).status).to.equal(400);
      expect((await api.request(`/api/v1/members/${owner.userId}`, { method: 'DELETE', headers: admin.headers })).status).to.equal(403);
      expect((await api.request(`/api/v1/members/${stranger.userId}`, { method: 'DELETE', headers: owner.auth })).status).to.equal(404);
      expect(await Membership.countDocuments({ workspace_id: owner.workspaceId })).to.equal(2);
    });
  });
});
