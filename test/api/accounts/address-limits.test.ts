import { expect } from 'chai';
import { jsonBody, startApi, type ApiResponse, type RunningApi } from '../../support/api';
import { signUp, uniqueEmail } from '../../support/accounts';
import { DEFAULT_PASSWORD_HASH_LIMITS, limitPasswordHashing } from '../../../api/auth/passwords';
import { authorizationUrl, hiddenFields, pkcePair, postForm, REDIRECT_URI, registerApp } from '../oauth/oauth-driver';

/**
 * Limits per caller address on the public entry points, and the bound on password hashes at
 * once (issue 29, item 2; decision 0172), over HTTP. The caller's address is the socket's,
 * or behind a trusted proxy (`TRUST_PROXY`) the one it forwards.
 */
describe('limits per caller address, and on password hashes at once', () => {
  const small = { limit: 3, windowSeconds: 600 };
  let api: RunningApi;
  let untrusting: RunningApi;
  before(async () => {
    const addressLimits = { signup: small, signup_email: small, login: small, login_2fa: small, invite_accept: small, oauth_register: small };
    api = await startApi({ trustProxy: ['loopback'], addressLimits });
    untrusting = await startApi({ addressLimits });
  });
  after(async () => {
    await api.close();
    await untrusting.close();
  });

  let nextAddress = 1;
  /** A fresh client address, as a trusted proxy would forward it. */
  const from = () => ({ 'X-Forwarded-For': `198.51.100.${nextAddress++}` });
  const signupBody = (email = uniqueEmail('limits')) => ({ name: 'Asha Rao', email, password: 'correct horse battery' });

  async function expectLimited(res: ApiResponse, what: RegExp): Promise<void> {
    expect(res.status).to.equal(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 600);
    const body = await res.json();
    expect(Object.keys(body)).to.deep.equal(['detail']);
    expect(body.detail).to.match(what).and.include(`try again in ${retryAfter} seconds`);
  }

  it('sign-up: a few per address, then 429 with Retry-After and nothing created; another address goes on', async () => {
    const address = from();
    for (let i = 0; i < 3; i++) expect((await api.request('/api/v1/auth/signup', jsonBody(signupBody(), address))).status).to.equal(201);
    const refused = signupBody();
    await expectLimited(await api.request('/api/v1/auth/signup', jsonBody(refused, address)), /too many sign-ups from this address/);
    const login = await api.request('/api/v1/auth/login', jsonBody({ email: refused.email, password: refused.password }, from()));
    expect(login.status, 'the refused sign-up created no account').to.equal(401);
    expect((await api.request('/api/v1/auth/signup', jsonBody(signupBody(), from()))).status).to.equal(201);
  });

  it('sign-up: a few per email, whatever the address', async () => {
    const email = uniqueEmail('one-email');
    expect((await api.request('/api/v1/auth/signup', jsonBody(signupBody(email), from()))).status).to.equal(201);
    for (let i = 0; i < 2; i++) expect((await api.request('/api/v1/auth/signup', jsonBody(signupBody(email), from()))).status).to.equal(409);
    await expectLimited(await api.request('/api/v1/auth/signup', jsonBody(signupBody(email), from())), /too many sign-ups for this email/);
  });

  it('X-Forwarded-For counts only from a trusted proxy', async () => {
    for (let i = 0; i < 3; i++) expect((await untrusting.request('/api/v1/auth/signup', jsonBody(signupBody(), from()))).status).to.equal(201);
    await expectLimited(await untrusting.request('/api/v1/auth/signup', jsonBody(signupBody(), from())), /sign-ups from this address/);
  });

  it('sign-in: counted per address (right passwords too), before the per-email failures', async () => {
    const user = await signUp(api, {});
    const address = from();
    for (let i = 0; i < 3; i++) {
      expect((await api.request('/api/v1/auth/login', jsonBody({ email: user.email, password: user.password }, address))).status).to.equal(200);
    }
    await expectLimited(
      await api.request('/api/v1/auth/login', jsonBody({ email: user.email, password: user.password }, address)),
      /too many sign-ins from this address/,
    );
    expect((await api.request('/api/v1/auth/login', jsonBody({ email: user.email, password: user.password }, from()))).status).to.equal(200);
  });

  it('two-factor sign-in and invite acceptance: refused before their body is read', async () => {
    for (const [path, what] of [
      ['/api/v1/auth/login/2fa', /two-factor sign-ins/],
      ['/api/v1/invites/inv_nothing/accept', /invite acceptances/],
    ] as const) {
      const address = from();
      for (let i = 0; i < 3; i++) expect((await api.request(path, jsonBody({}, address))).status, path).to.equal(422);
      await expectLimited(await api.request(path, jsonBody({}, address)), what);
    }
  });

  it('OAuth client registration: a few per address', async () => {
    const address = from();
    const register = () =>
      api.request('/oauth/register', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...address },
        body: JSON.stringify({ client_name: 'Flood', redirect_uris: [REDIRECT_URI] }),
      });
    for (let i = 0; i < 3; i++) expect((await register()).status).to.equal(201);
    await expectLimited(await register(), /app registrations from this address/);
  });

  it("the consent page's sign-in counts with the API's: 429 as a page, with Retry-After", async () => {
    const user = await signUp(api, {});
    const page = await fetch(authorizationUrl(api, await registerApp(api), pkcePair().challenge));
    const fields = hiddenFields(await page.text());
    // From 127.0.0.1 itself (no forwarded address): no other test here signs in from it.
    for (let i = 0; i < 3; i++)
      expect((await postForm(api, '/oauth/authorize', { ...fields, email: user.email, password: user.password })).status).to.equal(200);
    const limited = await postForm(api, '/oauth/authorize', { ...fields, email: user.email, password: user.password });
    expect(limited.status).to.equal(429);
    expect(limited.headers.get('content-type')).to.match(/^text\/html/);
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 600);
    expect(await limited.text()).to.include('too many sign-ins from this address');
  });

  describe('password hashes at once', () => {
    let bounded: RunningApi;
    before(async () => {
      bounded = await startApi({ passwordHashLimits: { concurrency: 1, queue: 1 } });
    });
    after(async () => {
      await bounded.close();
      limitPasswordHashing(DEFAULT_PASSWORD_HASH_LIMITS);
    });

    it('a burst beyond the bound is refused at once (503, Retry-After), and a refused sign-up changes nothing', async () => {
      const bodies = Array.from({ length: 24 }, () => signupBody());
      const answers = await Promise.all(bodies.map((body) => bounded.request('/api/v1/auth/signup', jsonBody(body))));
      const statuses = answers.map((res) => res.status);
      expect(statuses.filter((s) => s === 201).length, statuses.join(' ')).to.be.at.least(2);
      const refused = answers.map((res, i) => ({ res, body: bodies[i] })).filter(({ res }) => res.status === 503);
      expect(refused.length, statuses.join(' ')).to.be.greaterThan(0);
      expect(
        statuses.every((s) => s === 201 || s === 503),
        statuses.join(' '),
      ).to.equal(true);
      const first = refused[0];
      expect(first.res.headers.get('retry-after')).to.equal('1');
      expect((await first.res.json()).detail).to.include('too many passwords are being checked');
      const login = await bounded.request('/api/v1/auth/login', jsonBody({ email: first.body.email, password: first.body.password }));
      expect(login.status, 'no account for the refused sign-up').to.equal(401);
    });
  });
});
