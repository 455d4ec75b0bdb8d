import { expect } from 'chai';
import { LedgerItem } from '../../../db/models/ledger-item';
import { Membership } from '../../../db/models/membership';
import { User } from '../../../db/models/user';
import { Workspace } from '../../../db/models/workspace';
import { jsonBody, startApi, type RunningApi } from '../../support/api';
import { signUp, uniqueEmail } from '../../support/accounts';

describe('sign-up and sign-in', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  describe('POST /auth/signup', () => {
    it('creates the user, an onboarding workspace owned by them, and 50000 paise of welcome credits', async () => {
      const email = uniqueEmail('Signup');
      const res = await api.request('/api/v1/auth/signup', jsonBody({ name: 'Asha Rao', email, password: 'long enough pw', workspace_name: 'Acme Calls' }));
      expect(res.status).to.equal(201);
      const body = await res.json();
      expect(body.token).to.be.a('string');
      expect(body.user).to.include({ name: 'Asha Rao', email: email.toLowerCase(), two_factor_enabled: false });
      expect(body.user.id).to.match(/^[0-9a-f]{32}$/);
      expect(body.workspace).to.include({ name: 'Acme Calls', status: 'onboarding', role: 'owner', plan: 'starter' });
      expect(body.workspace.created_at).to.match(/\+05:30$/);

      const membership = await Membership.findOne({ workspace_id: body.workspace.id }).lean();
      expect(membership).to.include({ user_id: body.user.id, role: 'owner' });
      const ledger = await LedgerItem.find({ workspace_id: body.workspace.id }).lean();
      expect(ledger).to.have.length(1);
      expect(ledger[0]).to.include({ kind: 'grant', amount_paise: 50_000, balance_after_paise: 50_000, seq: 1 });
      const stored = await User.findById(body.user.id).lean();
      expect(stored?.password_hash)
        .to.match(/^scrypt\$/)
        .and.not.include('long enough pw');
    });

    it('names the workspace after the person when no name is given', async () => {
      const res = await api.request('/api/v1/auth/signup', jsonBody({ name: 'Ravi', email: uniqueEmail(), password: 'long enough pw' }));
      expect((await res.json()).workspace.name).to.equal("Ravi's workspace");
    });

    it('answers 409 for an address already signed up, in any letter case, and creates nothing', async () => {
      const first = await signUp(api);
      const before = await Workspace.countDocuments();
      const res = await api.request('/api/v1/auth/signup', jsonBody({ name: 'Other', email: first.email.toUpperCase(), password: 'another password' }));
      expect(res.status).to.equal(409);
      expect(await Workspace.countDocuments()).to.equal(before);
    });

    const bad: [string, Record<string, unknown>, string, (string | number)[]][] = [
      ['a missing name', { email: 'a@example.com', password: 'long enough' }, 'missing', ['body', 'name']],
      ['an empty name', { name: '', email: 'a@example.com', password: 'long enough' }, 'string_too_short', ['body', 'name']],
      ['a name over 100 characters', { name: 'x'.repeat(101), email: 'a@example.com', password: 'long enough' }, 'string_too_long', ['body', 'name']],
      ['a blank name', { name: '   ', email: 'a@example.com', password: 'long enough' }, 'string_pattern_mismatch', ['body', 'name']],
      ['a bad email', { name: 'A', email: 'not-an-email', password: 'long enough' }, 'value_error', ['body', 'email']],
      ['a 7-character password', { name: 'A', email: 'a@example.com', password: '1234567' }, 'string_too_short', ['body', 'password']],
      ['a 129-character password', { name: 'A', email: 'a@example.com', password: 'p'.repeat(129) }, 'string_too_long', ['body', 'password']],
      ['an unknown field', { name: 'A', email: 'a@example.com', password: 'long enough', plan: 'scale' }, 'extra_forbidden', ['body', 'plan']],
    ];
    for (const [what, body, type, loc] of bad) {
      it(`answers 422 ${type} at ${loc.join('.')} for ${what}, and creates nothing`, async () => {
        const before = await User.countDocuments();
        const res = await api.request('/api/v1/auth/signup', jsonBody(body));
        expect(res.status).to.equal(422);
        const { detail } = await res.json();
        expect(detail).to.deep.include.members([{ ...detail.find((d: { loc: unknown[] }) => JSON.stringify(d.loc) === JSON.stringify(loc)), type, loc }]);
        expect(await User.countDocuments()).to.equal(before);
      });
    }

    it('accepts exactly 8 and exactly 128 password characters', async () => {
      for (const password of ['p'.repeat(8), 'p'.repeat(128)]) {
        const res = await api.request('/api/v1/auth/signup', jsonBody({ name: 'A', email: uniqueEmail(), password }));
        expect(res.status).to.equal(201);
      }
    });
  });

  describe('POST /auth/login', () => {
    it('answers a token, the user and their workspaces', async () => {
      const account = await signUp(api);
      const res = await api.request('/api/v1/auth/login', jsonBody({ email: account.email, password: account.password }));
      expect(res.status).to.equal(200);
      const body = await res.json();
      expect(body.token).to.be.a('string').and.not.equal(account.token);
      expect(body.user.id).to.equal(account.userId);
      expect(body.workspaces.map((w: { id: string }) => w.id)).to.deep.equal([account.workspaceId]);
      const me = await api.request('/api/v1/auth/me', { headers: { Authorization: `Bearer ${body.token}` } });
      expect(me.status).to.equal(200);
    });

    it('answers 401 with WWW-Authenticate for a wrong password and for an unknown address', async () => {
      const account = await signUp(api);
      for (const body of [
        { email: account.email, password: 'wrong password' },
        { email: uniqueEmail('nobody'), password: 'whatever' },
      ]) {
        const res = await api.request('/api/v1/auth/login', jsonBody(body));
        expect(res.status).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
        expect((await res.json()).detail).to.equal('wrong email or password');
      }
    });
  });
});
