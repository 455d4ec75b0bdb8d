import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { jsonBody, startApi, type RunningApi } from '../../support/api';
import { signUp, uniqueEmail } from '../../support/accounts';

describe('sign-in throttling: 5 failed attempts per address in 5 minutes', () => {
  let api: RunningApi;
  let clock = Date.now();
  before(async () => (api = await startApi({ now: () => new Date(clock) })));
  after(() => api.close());

  const login = (email: string, password: string) => api.request('/api/v1/auth/login', jsonBody({ email, password }));

  it('answers 429 with Retry-After after 5 failures, even for the right password, until the window passes', async () => {
    const account = await signUp(api);
    for (let i = 0; i < 5; i++) expect((await login(account.email, `wrong ${i}`)).status, `attempt ${i + 1}`).to.equal(401);
    const blocked = await login(account.email, account.password);
    expect(blocked.status).to.equal(429);
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).to.be.within(295, 300);
    expect((await blocked.json()).detail).to.match(/too many failed sign-ins/);
    expect((await login(account.email.toUpperCase(), account.password)).status, 'the address in another case').to.equal(429);

    clock += 299_000;
    expect((await login(account.email, account.password)).status, 'a second before the window ends').to.equal(429);
    clock += 1_500;
    expect((await login(account.email, account.password)).status, 'after the window').to.equal(200);
  });

  it('4 failures leave the fifth attempt open, and a success clears the count', async () => {
    const account = await signUp(api);
    for (let i = 0; i < 4; i++) await login(account.email, 'wrong');
    expect((await login(account.email, account.password)).status).to.equal(200);
    for (let i = 0; i < 4; i++) expect((await login(account.email, 'wrong')).status).to.equal(401);
    expect((await login(account.email, account.password)).status).to.equal(200);
  });

  it('counts per address: another address is unaffected; unknown addresses are throttled too', async () => {
    const blockedOne = await signUp(api);
    const other = await signUp(api);
    for (let i = 0; i < 5; i++) await login(blockedOne.email, 'wrong');
    expect((await login(blockedOne.email, blockedOne.password)).status).to.equal(429);
    expect((await login(other.email, other.password)).status).to.equal(200);
    const nobody = uniqueEmail('nobody');
    for (let i = 0; i < 5; i++) expect((await login(nobody, 'whatever')).status).to.equal(401);
    expect((await login(nobody, 'whatever')).status).to.equal(429);
  });

  it('lets at most 5 of a burst of parallel guesses through, even when they all arrive at once', async () => {
    const account = await signUp(api);
    const statuses = (await Promise.all(Array.from({ length: 15 }, (_, i) => login(account.email, `guess ${i}`)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).to.have.length(5);
    expect(statuses.filter((s) => s === 429)).to.have.length(10);
    expect((await login(account.email, account.password)).status).to.equal(429);
  });

  it('counts wrong current passwords on account changes toward the same allowance', async () => {
    const account = await signUp(api);
    for (let i = 0; i < 5; i++) {
      const res = await api.request('/api/v1/account/password', jsonBody({ current_password: `wrong ${i}`, new_password: 'a brand new secret' }, account.auth));
      expect(res.status).to.equal(400);
    }
    expect(
      (await api.request('/api/v1/account/password', jsonBody({ current_password: account.password, new_password: 'a brand new secret' }, account.auth)))
        .status,
    ).to.equal(429);
    expect((await login(account.email, account.password)).status).to.equal(429);
  });

  it('records failed and successful sign-ins in the audit log with the address and ip', async () => {
    const account = await signUp(api);
    await login(account.email, 'wrong');
    await login(account.email, account.password);
    const failed = await AuditEvent.findOne({ workspace_id: account.workspaceId, action: 'auth.sign_in_failed' }).lean();
    expect(failed?.target).to.include({ id: account.userId, name: account.email });
    expect(failed?.ip).to.be.a('string').and.not.empty;
    expect(await AuditEvent.countDocuments({ workspace_id: account.workspaceId, action: 'auth.signed_in', 'actor.id': account.userId })).to.equal(1);
  });
});
