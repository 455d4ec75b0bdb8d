import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { Invite } from '../../../db/models/invite';
import { Membership } from '../../../db/models/membership';
import { User } from '../../../db/models/user';
import { totpCode } from '../../../api/auth/totp';
import { jsonBody, startApi, type RunningApi } from '../../support/api';
import { memberWithRole, signUp, uniqueEmail, type SignedUp } from '../../support/accounts';

describe('invites', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  const invite = async (by: SignedUp, body: Record<string, unknown>, headers = by.auth) => api.request('/api/v1/invites', jsonBody(body, headers));

  it('creates an invite with a token shown once, lists it, and shows it publicly by token', async () => {
    const owner = await signUp(api, { name: 'Inviter', workspace_name: 'Acme' });
    const email = uniqueEmail('Invitee');
    const res = await invite(owner, { email, role: 'developer' });
    expect(res.status).to.equal(201);
    const created = await res.json();
    expect(created).to.include({ email: email.toLowerCase(), role: 'developer', status: 'pending', invited_by: 'Inviter', accepted_at: null });
    expect(created.token).to.match(/^inv_/);
    const list = await (await api.request('/api/v1/invites', { headers: owner.auth })).json();
    expect(list.map((i: { id: string }) => i.id)).to.deep.equal([created.id]);
    expect(list[0]).not.to.have.property('token');
    expect((await Invite.findById(created.id).lean())?.token_hash).not.to.include(created.token);

    const info = await api.request(`/api/v1/invites/${created.token}`);
    expect(info.status).to.equal(200);
    expect(await info.json()).to.deep.include({
      workspace: { id: owner.workspaceId, name: 'Acme' },
      role: 'developer',
      status: 'pending',
      account_exists: false,
    });
    expect((await api.request('/api/v1/invites/inv_unknown')).status).to.equal(404);
    expect(await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'invite.sent' })).to.equal(1);
  });

  it('a new person accepts with a name and password, joins with the role, and is signed in', async () => {
    const owner = await signUp(api);
    const email = uniqueEmail();
    const { token } = await (await invite(owner, { email, role: 'viewer' })).json();
    const missing = await api.request(`/api/v1/invites/${token}/accept`, jsonBody({ password: 'long enough pw' }));
    expect(missing.status).to.equal(422);
    expect((await missing.json()).detail[0]).to.include({ type: 'missing' });
    const short = await api.request(`/api/v1/invites/${token}/accept`, jsonBody({ name: 'New', password: 'short' }));
    expect(short.status).to.equal(422);
    expect(await User.countDocuments({ email })).to.equal(0);

    const res = await api.request(`/api/v1/invites/${token}/accept`, jsonBody({ name: 'New Person', password: 'long enough pw' }));
    expect(res.status).to.equal(200);
    const body = await res.json();
    expect(body.user).to.include({ name: 'New Person', email });
    expect(body.workspace).to.include({ id: owner.workspaceId, role: 'viewer' });
    const members = await (await api.request('/api/v1/members', { headers: { Authorization: `Bearer ${body.token}` } })).json();
    expect(members.map((m: { email: string }) => m.email)).to.include(email);
    expect((await api.request(`/api/v1/invites/${token}/accept`, jsonBody({ name: 'Again', password: 'long enough pw' }))).status).to.equal(409);
    expect((await (await api.request(`/api/v1/invites/${token}`)).json()).status).to.equal('accepted');
    expect(await AuditEvent.countDocuments({ workspace_id: owner.workspaceId, action: 'invite.accepted' })).to.equal(1);
  });

  it('an existing account accepts with its password (and its code when two-factor is on)', async () => {
    const owner = await signUp(api);
    const existing = await signUp(api);
    const setup = await (await api.request('/api/v1/account/2fa/setup', { method: 'POST', headers: existing.auth })).json();
    // Enabled with the current step's code and accepted with the next step's: the server takes one
    // step either way and never a step at or before the last one used, so both hold even when a
    // request crosses a 30 s boundary (the previous step's code failed then, and two-factor was off).
    const enabled = await api.request('/api/v1/account/2fa/enable', jsonBody({ code: totpCode(setup.secret, new Date()) }, existing.auth));
    expect(enabled.status, 'two-factor enabled').to.equal(200);
    const { token } = await (await invite(owner, { email: existing.email, role: 'admin' })).json();
    expect((await (await api.request(`/api/v1/invites/${token}`)).json()).account_exists).to.equal(true);
    const wrong = await api.request(`/api/v1/invites/${token}/accept`, jsonBody({ password: 'not the password' }));
    expect(wrong.status).to.equal(401);
    expect(wrong.headers.get('www-authenticate')).to.match(/^Bearer/);
    expect((await api.request(`/api/v1/invites/${token}/accept`, jsonBody({ password: existing.password }))).status).to.equal(401);
    const ok = await api.request(
      `/api/v1/invites/${token}/accept`,
      jsonBody({ password: existing.password, code: totpCode(setup.secret, new Date(Date.now() + 30_000)) }),
    );
    expect(ok.status).to.equal(200);
    expect((await ok.json()).workspace).to.include({ id: owner.workspaceId, role: 'admin' });
    expect(await Membership.countDocuments({ user_id: existing.userId })).to.equal(2);
  });

  it('refuses a second invite to the same address, a member, and an owner invite from an admin', async () => {
    const owner = await signUp(api);
    const admin = await memberWithRole(api, owner.workspaceId, 'admin');
    const email = uniqueEmail();
    expect((await invite(owner, { email, role: 'viewer' })).status).to.equal(201);
    expect((await invite(owner, { email: email.toUpperCase(), role: 'viewer' })).status).to.equal(409);
    expect((await invite(owner, { email: admin.email, role: 'viewer' })).status).to.equal(409);
    expect((await invite(admin, { email: uniqueEmail(), role: 'owner' }, admin.headers)).status).to.equal(403);
    expect((await invite(admin, { email: uniqueEmail(), role: 'admin' }, admin.headers)).status).to.equal(201);
  });

  it('stops at the plan member limit (Starter: 5 members, pending invites count)', async () => {
    const owner = await signUp(api);
    for (let i = 0; i < 4; i++) expect((await invite(owner, { email: uniqueEmail(), role: 'viewer' })).status).to.equal(201);
    const over = await invite(owner, { email: uniqueEmail(), role: 'viewer' });
    expect(over.status).to.equal(409);
    expect((await over.json()).detail).to.match(/allows 5 members/);
    expect(await Invite.countDocuments({ workspace_id: owner.workspaceId })).to.equal(4);
  });

  it('a withdrawn or expired invite cannot be accepted', async () => {
    const owner = await signUp(api);
    const first = await (await invite(owner, { email: uniqueEmail(), role: 'viewer' })).json();
    expect((await api.request(`/api/v1/invites/${first.id}`, { method: 'DELETE', headers: owner.auth })).status).to.equal(204);
    expect((await api.request(`/api/v1/invites/${first.id}`, { method: 'DELETE', headers: owner.auth })).status).to.equal(404);
    expect((await api.request(`/api/v1/invites/${first.token}/accept`, jsonBody({ name: 'X', password: 'long enough pw' }))).status).to.equal(409);

    const second = await (await invite(owner, { email: uniqueEmail(), role: 'viewer' })).json();
    await Invite.updateOne({ _id: second.id }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    expect((await (await api.request(`/api/v1/invites/${second.token}`)).json()).status).to.equal('expired');
    expect((await api.request(`/api/v1/invites/${second.token}/accept`, jsonBody({ name: 'X', password: 'long enough pw' }))).status).to.equal(409);
  });

  it('another workspace cannot see or withdraw the invite (404)', async () => {
    const owner = await signUp(api);
    const other = await signUp(api);
    const created = await (await invite(owner, { email: uniqueEmail(), role: 'viewer' })).json();
    expect(await (await api.request('/api/v1/invites', { headers: other.auth })).json()).to.deep.equal([]);
    expect((await api.request(`/api/v1/invites/${created.id}`, { method: 'DELETE', headers: other.auth })).status).to.equal(404);
    expect((await Invite.findById(created.id).lean())?.status).to.equal('pending');
  });

  it('answers 422 for bad invite bodies and creates nothing', async () => {
    const owner = await signUp(api);
    for (const [body, loc] of [
      [{ email: 'nope', role: 'viewer' }, ['body', 'email']],
      [{ email: uniqueEmail(), role: 'boss' }, ['body', 'role']],
      [{ role: 'viewer' }, ['body', 'email']],
      [{ email: uniqueEmail(), role: 'viewer', note: 'hi' }, ['body', 'note']],
    ] as const) {
      const res = await invite(owner, body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect((await res.json()).detail.map((d: { loc: unknown }) => d.loc)).to.deep.include(loc);
    }
    expect(await Invite.countDocuments({ workspace_id: owner.workspaceId })).to.equal(0);
  });
});
