import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { Membership } from '../../../db/models/membership';
import { newId } from '../../../db/ids';
import { Session } from '../../../db/models/session';
import { User } from '../../../db/models/user';
import { totpCode } from '../../../api/auth/totp';
import { jsonBody, startApi, type RunningApi } from '../../support/api';
import { signUp, uniqueEmail, withJson, type SignedUp } from '../../support/accounts';

describe('the account', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  const login = async (email: string, password: string) => {
    const res = await api.request('/api/v1/auth/login', jsonBody({ email, password }));
    return { status: res.status, body: await res.json() };
  };
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('GET /account answers the signed-in user; PATCH changes the name only', async () => {
    const me = await signUp(api, { name: 'Old Name' });
    const got = await (await api.request('/api/v1/account', { headers: me.auth })).json();
    expect(got).to.include({ id: me.userId, name: 'Old Name', two_factor_enabled: false });
    const res = await api.request('/api/v1/account', withJson('PATCH', { name: '  New Name ' }, me.auth));
    expect(res.status).to.equal(200);
    expect((await res.json()).name).to.equal('New Name');
    for (const bad of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 'ok', email: 'x@example.com' }]) {
      const r = await api.request('/api/v1/account', withJson('PATCH', bad, me.auth));
      expect(r.status, JSON.stringify(bad)).to.equal(422);
    }
    expect((await User.findById(me.userId).lean())?.name).to.equal('New Name');
  });

  it('answers 401 with WWW-Authenticate without credentials and with a made-up token', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-a-token' }, { Authorization: 'Basic abc' }] as Record<string, string>[]) {
      const res = await api.request('/api/v1/account', { headers });
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
      expect((await res.json()).detail).to.be.a('string');
    }
  });

  describe('email', () => {
    it('changes with the current password; sign-in then uses the new address', async () => {
      const me = await signUp(api);
      const next = uniqueEmail('moved');
      const res = await api.request('/api/v1/account/email', jsonBody({ email: next, password: me.password }, me.auth));
      expect(res.status).to.equal(200);
      expect((await res.json()).email).to.equal(next);
      expect((await login(me.email, me.password)).status).to.equal(401);
      expect((await login(next, me.password)).status).to.equal(200);
      expect(await AuditEvent.countDocuments({ action: 'account.email_changed', 'actor.id': me.userId })).to.equal(1);
    });

    it('answers 400 for a wrong password and 409 for an address in use, changing nothing', async () => {
      const me = await signUp(api);
      const other = await signUp(api);
      const wrong = await api.request('/api/v1/account/email', jsonBody({ email: uniqueEmail(), password: 'not mine at all' }, me.auth));
      expect(wrong.status).to.equal(400);
      const taken = await api.request('/api/v1/account/email', jsonBody({ email: other.email, password: me.password }, me.auth));
      expect(taken.status).to.equal(409);
      expect((await User.findById(me.userId).lean())?.email).to.equal(me.email);
    });
  });

  describe('password and sessions', () => {
    it('a password change ends every other session at once and keeps this one', async () => {
      const me = await signUp(api);
      const other = (await login(me.email, me.password)).body.token as string;
      expect((await api.request('/api/v1/account', { headers: bearer(other) })).status).to.equal(200);
      const res = await api.request('/api/v1/account/password', jsonBody({ current_password: me.password, new_password: 'a brand new secret' }, me.auth));
      expect(res.status).to.equal(200);
      expect((await res.json()).revoked_sessions).to.equal(1);
      const afterwards = await api.request('/api/v1/account', { headers: bearer(other) });
      expect(afterwards.status).to.equal(401);
      expect(afterwards.headers.get('www-authenticate')).to.match(/^Bearer/);
      expect((await api.request('/api/v1/account', { headers: me.auth })).status).to.equal(200);
      expect((await login(me.email, me.password)).status).to.equal(401);
      expect((await login(me.email, 'a brand new secret')).status).to.equal(200);
    });

    it('a password change needs the current password and a valid new one', async () => {
      const me = await signUp(api);
      expect(
        (await api.request('/api/v1/account/password', jsonBody({ current_password: 'wrong one', new_password: 'a brand new secret' }, me.auth))).status,
      ).to.equal(400);
      expect((await api.request('/api/v1/account/password', jsonBody({ current_password: me.password, new_password: 'short' }, me.auth))).status).to.equal(422);
      expect((await login(me.email, me.password)).status).to.equal(200);
    });

    it('lists sessions newest first with the current one marked, and ends one at once', async () => {
      const me = await signUp(api);
      const second = (await login(me.email, me.password)).body.token as string;
      const list = await (await api.request('/api/v1/account/sessions', { headers: bearer(second) })).json();
      expect(list).to.have.length(2);
      expect(list[0].current).to.equal(true);
      expect(list[1].current).to.equal(false);
      expect(list.every((s: { active: boolean }) => s.active)).to.equal(true);
      const res = await api.request(`/api/v1/account/sessions/${list[1].id}`, { method: 'DELETE', headers: bearer(second) });
      expect(res.status).to.equal(204);
      expect(await res.text()).to.equal('');
      expect((await api.request('/api/v1/account', { headers: me.auth })).status).to.equal(401);
      const after = await (await api.request('/api/v1/account/sessions', { headers: bearer(second) })).json();
      expect(after[1].active).to.equal(false);
      expect(after[1].revoked_at).to.be.a('string');
    });

    it('keeps the last 50 sessions in the list', async () => {
      const me = await signUp(api);
      const now = Date.now();
      await Session.insertMany(
        Array.from({ length: 55 }, (_, i) => ({
          _id: newId(),
          user_id: me.userId,
          created_at: new Date(now - (i + 1) * 1000),
          last_used_at: new Date(now),
          expires_at: new Date(now + 3_600_000),
        })),
      );
      const list = await (await api.request('/api/v1/account/sessions', { headers: me.auth })).json();
      expect(list).to.have.length(50);
      expect(list[0].current).to.equal(true);
    });

    it("answers 404 for another person's session and 422 for a malformed id", async () => {
      const me = await signUp(api);
      const other = await signUp(api);
      const theirs = (await (await api.request('/api/v1/account/sessions', { headers: other.auth })).json())[0].id;
      expect((await api.request(`/api/v1/account/sessions/${theirs}`, { method: 'DELETE', headers: me.auth })).status).to.equal(404);
      expect((await api.request('/api/v1/account', { headers: other.auth })).status).to.equal(200);
      expect((await api.request('/api/v1/account/sessions/nope', { method: 'DELETE', headers: me.auth })).status).to.equal(422);
    });

    it('records password changes and revoked sessions in the audit log of every workspace of the person', async () => {
      const me = await signUp(api);
      const second = await signUp(api);
      await Membership.create({ _id: newId(), workspace_id: second.workspaceId, user_id: me.userId, role: 'viewer', joined_at: new Date() });
      await api.request('/api/v1/account/password', jsonBody({ current_password: me.password, new_password: 'a brand new secret' }, me.auth));
      await api.request('/api/v1/account/sessions/revoke-others', { method: 'POST', headers: me.auth });
      for (const workspaceId of [me.workspaceId, second.workspaceId]) {
        const actions = (await AuditEvent.find({ workspace_id: workspaceId, 'actor.id': me.userId }).lean()).map((e) => e.action);
        expect(actions, workspaceId).to.include.members(['account.password_changed', 'account.sessions_revoked']);
      }
    });

    it('revoke-others ends all but this session', async () => {
      const me = await signUp(api);
      const others = [(await login(me.email, me.password)).body.token, (await login(me.email, me.password)).body.token];
      const res = await api.request('/api/v1/account/sessions/revoke-others', { method: 'POST', headers: me.auth });
      expect((await res.json()).revoked_sessions).to.equal(2);
      for (const token of others) expect((await api.request('/api/v1/auth/me', { headers: bearer(token) })).status).to.equal(401);
      expect((await api.request('/api/v1/auth/me', { headers: me.auth })).status).to.equal(200);
    });

    it('logout stops the token at once', async () => {
      const me = await signUp(api);
      expect((await api.request('/api/v1/auth/logout', { method: 'POST', headers: me.auth })).status).to.equal(204);
      expect((await api.request('/api/v1/auth/me', { headers: me.auth })).status).to.equal(401);
    });
  });

  describe('two-factor sign-in', () => {
    async function enableTwoFactor(me: SignedUp): Promise<string> {
      const setup = await (await api.request('/api/v1/account/2fa/setup', { method: 'POST', headers: me.auth })).json();
      expect(setup.otpauth_uri).to.match(/^otpauth:\/\/totp\//);
      const wrong = await api.request('/api/v1/account/2fa/enable', jsonBody({ code: totpCode(setup.secret, new Date(Date.now() - 5 * 60_000)) }, me.auth));
      expect(wrong.status).to.equal(400);
      const res = await api.request('/api/v1/account/2fa/enable', jsonBody({ code: totpCode(setup.secret, new Date()) }, me.auth));
      expect(res.status).to.equal(200);
      expect((await res.json()).two_factor_enabled).to.equal(true);
      return setup.secret;
    }

    it('sign-in then needs the code; a wrong code is 401, the right one signs in, and a code works once', async () => {
      const me = await signUp(api);
      const secret = await enableTwoFactor(me);
      const first = await login(me.email, me.password);
      expect(first.status).to.equal(200);
      expect(first.body).to.include({ two_factor_required: true });
      expect(first.body).not.to.have.property('token');
      const wrongCode = String((Number(totpCode(secret, new Date())) + 1) % 1_000_000).padStart(6, '0');
      const wrong = await api.request('/api/v1/auth/login/2fa', jsonBody({ challenge_token: first.body.challenge_token, code: wrongCode }));
      expect(wrong.status).to.equal(401);
      // The step used to enable is spent; the next step's code is valid within the drift window.
      const code = totpCode(secret, new Date(Date.now() + 30_000));
      const ok = await api.request('/api/v1/auth/login/2fa', jsonBody({ challenge_token: first.body.challenge_token, code }));
      expect(ok.status).to.equal(200);
      const body = await ok.json();
      expect(body.token).to.be.a('string');
      expect((await api.request('/api/v1/auth/me', { headers: bearer(body.token) })).status).to.equal(200);
      const again = await login(me.email, me.password);
      const replay = await api.request('/api/v1/auth/login/2fa', jsonBody({ challenge_token: again.body.challenge_token, code }));
      expect(replay.status).to.equal(401);
    });

    it('a session token is not a challenge and a challenge is not a session token', async () => {
      const me = await signUp(api);
      await enableTwoFactor(me);
      const challenge = (await login(me.email, me.password)).body.challenge_token;
      expect((await api.request('/api/v1/auth/login/2fa', jsonBody({ challenge_token: me.token, code: '123456' }))).status).to.equal(401);
      expect((await api.request('/api/v1/auth/me', { headers: bearer(challenge) })).status).to.equal(401);
    });

    it('setup twice while on is 409; disable needs the password or a code', async () => {
      const me = await signUp(api);
      await enableTwoFactor(me);
      expect((await api.request('/api/v1/account/2fa/setup', { method: 'POST', headers: me.auth })).status).to.equal(409);
      expect((await api.request('/api/v1/account/2fa/disable', jsonBody({}, me.auth))).status).to.equal(422);
      expect((await api.request('/api/v1/account/2fa/disable', jsonBody({ password: 'not the password' }, me.auth))).status).to.equal(400);
      const off = await api.request('/api/v1/account/2fa/disable', jsonBody({ password: me.password }, me.auth));
      expect(off.status).to.equal(200);
      expect((await off.json()).two_factor_enabled).to.equal(false);
      expect((await login(me.email, me.password)).body.token).to.be.a('string');
      expect((await api.request('/api/v1/account/2fa/disable', jsonBody({ password: me.password }, me.auth))).status).to.equal(409);
    });

    it('enable without setup is 400', async () => {
      const me = await signUp(api);
      expect((await api.request('/api/v1/account/2fa/enable', jsonBody({ code: '123456' }, me.auth))).status).to.equal(400);
    });
  });

  describe('DELETE /account', () => {
    it('is 400 for the last owner of a workspace, and changes nothing', async () => {
      const me = await signUp(api);
      const res = await api.request('/api/v1/account', { method: 'DELETE', headers: me.auth });
      expect(res.status).to.equal(400);
      expect((await res.json()).detail).to.match(/last owner/);
      expect(await User.countDocuments({ _id: me.userId })).to.equal(1);
      expect((await api.request('/api/v1/auth/me', { headers: me.auth })).status).to.equal(200);
    });

    it('removes the account, its memberships and its sessions once another owner remains', async () => {
      const me = await signUp(api);
      const partner = await signUp(api);
      await Membership.create({ _id: newId(), workspace_id: me.workspaceId, user_id: partner.userId, role: 'owner', joined_at: new Date() });
      const res = await api.request('/api/v1/account', { method: 'DELETE', headers: me.auth });
      expect(res.status).to.equal(204);
      expect(await User.countDocuments({ _id: me.userId })).to.equal(0);
      expect(await Membership.countDocuments({ user_id: me.userId })).to.equal(0);
      expect((await api.request('/api/v1/auth/me', { headers: me.auth })).status).to.equal(401);
      expect((await login(me.email, me.password)).status).to.equal(401);
    });
  });
});
