import { expect } from 'chai';
import { AuditEvent } from '../../../db/models/audit-event';
import { totpCode } from '../../../api/auth/totp';
import { activeOwner, signUp, uniqueEmail, type SignedUp } from '../../support/accounts';
import { jsonBody, startApi, type RunningApi } from '../../support/api';
import {
  authorizationUrl,
  bearer,
  hiddenFields,
  pkcePair,
  postForm,
  registerApp,
  REDIRECT_URI,
  tokenRequest,
  workspaceOptions,
  type RegisteredClient,
} from './oauth-driver';

/**
 * Signing in on the consent page over HTTP, as a browser posts its forms: the same checks,
 * messages and throttle as `POST /auth/login`, answered as pages; the page's own tokens
 * bound to one authorization request. (The browser itself: test/e2e/oauth-consent-page.test.ts.)
 */
describe('OAuth consent page: signing in with email and password', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
  });
  after(() => api.close());

  /** The first page of a fresh authorization request, and its hidden fields. */
  async function openPage(
    client?: RegisteredClient,
    challenge = pkcePair().challenge,
  ): Promise<{ client: RegisteredClient; fields: Record<string, string>; html: string }> {
    const app = client ?? (await registerApp(api));
    const res = await fetch(authorizationUrl(api, app, challenge));
    expect(res.status).to.equal(200);
    const html = await res.text();
    return { client: app, fields: hiddenFields(html), html };
  }

  const loginDetail = async (email: string, password: string) => {
    const res = await api.request('/api/v1/auth/login', jsonBody({ email, password }));
    return { status: res.status, detail: (await res.json()).detail as string, retryAfter: res.headers.get('retry-after') };
  };

  function errorOf(html: string): string | undefined {
    return /<p class="error"[^>]*>([^<]*)<\/p>/.exec(html)?.[1];
  }

  it('offers email and password (and keeps the session-token form for the console)', async () => {
    const { html } = await openPage();
    expect(html).to.match(/<form method="post" action="\/oauth\/authorize" id="sign-in">/);
    expect(html).to.include('name="email"').and.include('type="password" id="password" name="password"').and.include('name="session_token"');
  });

  it('signs in, shows the workspaces and issues a code that exchanges, without opening a session', async () => {
    const { verifier, challenge } = pkcePair();
    const { client, fields } = await openPage(undefined, challenge);
    const picker = await postForm(api, '/oauth/authorize', { ...fields, email: owner.email.toUpperCase(), password: owner.password });
    const html = await picker.text();
    expect(picker.status, html).to.equal(200);
    expect(workspaceOptions(html)).to.deep.equal([owner.workspaceId]);
    const next = hiddenFields(html);
    expect(next).to.have.property('consent_token');
    expect(next).to.not.have.property('password');
    // The page's token is no session: the API refuses it.
    expect((await api.request('/api/v1/auth/me', { headers: bearer(next.consent_token) })).status).to.equal(401);

    const allowed = await postForm(api, '/oauth/authorize', { ...next, workspace_id: owner.workspaceId, decision: 'approve' });
    expect(allowed.status, await allowed.clone().text()).to.equal(303);
    const code = new URL(allowed.headers.get('location') as string).searchParams.get('code') as string;
    const tokens = await tokenRequest(api, {
      grant_type: 'authorization_code',
      client_id: client.client_id,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
    });
    expect(tokens.status).to.equal(200);

    const signedIn = await AuditEvent.find({ action: 'auth.signed_in', 'actor.id': owner.userId }).lean();
    expect(signedIn.some((e) => (e.details as { via?: string } | null)?.via === 'oauth_consent_page')).to.equal(true);
  });

  it('answers a wrong password and an unknown address alike, with the login’s message, as a page (401, no code)', async () => {
    const { fields } = await openPage();
    const wrong = await postForm(api, '/oauth/authorize', { ...fields, email: owner.email, password: 'not the password' });
    const unknown = await postForm(api, '/oauth/authorize', { ...fields, email: uniqueEmail('nobody'), password: 'not the password' });
    const login = await loginDetail(uniqueEmail('nobody'), 'not the password');
    for (const res of [wrong, unknown]) {
      expect(res.status).to.equal(401);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.headers.get('location')).to.equal(null);
      const html = await res.text();
      expect(errorOf(html)).to.equal(login.detail);
      expect(html).to.include('id="sign-in"').and.not.include('name="workspace_id"').and.not.include('not the password');
    }
    const failed = await AuditEvent.find({ action: 'auth.sign_in_failed', 'target.name': owner.email }).lean();
    expect(failed.length).to.be.at.least(1);
  });

  it('counts failures with POST /auth/login: the sixth is 429 with Retry-After, as an HTML page, even with the right password', async () => {
    const person = await signUp(api);
    const { fields } = await openPage();
    // Failures at the API and on the page fill the same five slots.
    for (let i = 0; i < 3; i += 1) expect((await loginDetail(person.email, 'wrong')).status).to.equal(401);
    for (let i = 0; i < 2; i += 1)
      expect((await postForm(api, '/oauth/authorize', { ...fields, email: person.email, password: 'wrong' })).status).to.equal(401);

    const throttled = await postForm(api, '/oauth/authorize', { ...fields, email: person.email, password: person.password });
    expect(throttled.status).to.equal(429);
    expect(throttled.headers.get('content-type')).to.match(/^text\/html/);
    const retryAfter = Number(throttled.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 300);
    const html = await throttled.text();
    expect(errorOf(html)).to.match(/^too many failed sign-ins for this address; try again in \d+ seconds$/);
    expect(html).to.not.include('name="workspace_id"');
    const login = await loginDetail(person.email, person.password);
    expect(login.status).to.equal(429);
    expect(login.retryAfter).to.be.a('string');
  });

  it('asks for the code when two-factor is on; the page’s challenge and token are bound to their request', async () => {
    const person = await signUp(api);
    const setup = await (await api.request('/api/v1/account/2fa/setup', { method: 'POST', headers: person.auth })).json();
    expect((await api.request('/api/v1/account/2fa/enable', jsonBody({ code: totpCode(setup.secret, new Date()) }, person.auth))).status).to.equal(200);

    const { client, fields } = await openPage();
    const codeStep = await postForm(api, '/oauth/authorize', { ...fields, email: person.email, password: person.password });
    const codeHtml = await codeStep.text();
    expect(codeStep.status, codeHtml).to.equal(200);
    expect(codeHtml).to.include('name="code"').and.not.include('name="workspace_id"');
    const challenge = hiddenFields(codeHtml).challenge_token;
    expect(challenge).to.be.a('string');
    // The page's challenge is not one of /auth/login/2fa.
    const viaApi = await api.request(
      '/api/v1/auth/login/2fa',
      jsonBody({ challenge_token: challenge, code: totpCode(setup.secret, new Date(Date.now() + 30_000)) }),
    );
    expect(viaApi.status).to.equal(401);
    // Nor does it work for another authorization request (another PKCE challenge) of the same app.
    const other = await openPage(client);
    const elsewhere = await postForm(api, '/oauth/authorize', {
      ...other.fields,
      challenge_token: challenge,
      code: totpCode(setup.secret, new Date(Date.now() + 30_000)),
    });
    expect(elsewhere.status).to.equal(401);
    expect(errorOf(await elsewhere.text())).to.equal('the sign-in challenge is not valid or has expired; sign in again');

    const signedIn = await postForm(api, '/oauth/authorize', { ...hiddenFields(codeHtml), code: totpCode(setup.secret, new Date(Date.now() + 30_000)) });
    const picker = await signedIn.text();
    expect(signedIn.status, picker).to.equal(200);
    const consentToken = hiddenFields(picker).consent_token;
    expect(workspaceOptions(picker)).to.deep.equal([person.workspaceId]);

    // The consent token approves only the request it was made for.
    const stranger = await openPage();
    const hijack = await postForm(api, '/oauth/authorize', {
      ...stranger.fields,
      consent_token: consentToken,
      workspace_id: person.workspaceId,
      decision: 'approve',
    });
    expect(hijack.status).to.equal(401);
    expect(hijack.headers.get('location')).to.equal(null);
    expect(await hijack.text()).to.include('id="sign-in"');
  });

  it('asks again, as a page, for a post without the password', async () => {
    const { fields } = await openPage();
    const res = await postForm(api, '/oauth/authorize', { ...fields, email: owner.email });
    expect(res.status).to.equal(400);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(errorOf(await res.text())).to.equal('Enter your email address and your password.');
  });
});
