import { expect } from 'chai';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, type SignedUp } from '../../support/accounts';
import { authorizationUrl, bearer, consent, pkcePair, registerApp, REDIRECT_URI, tokenRequest, type RegisteredClient } from './oauth-driver';

/** PKCE (S256 only) and single-use, short-lived authorization codes. */
describe('OAuth authorization codes and PKCE', () => {
  let clock = Date.now();
  let api: RunningApi;
  let owner: SignedUp;
  let client: RegisteredClient;
  before(async () => {
    api = await startApi({ now: () => new Date(clock) });
    owner = await activeOwner(api);
    client = await registerApp(api);
  });
  after(() => api.close());
  afterEach(() => (clock = Date.now()));

  /** A code approved by the owner, and the verifier that goes with it. */
  async function approvedCode(): Promise<{ code: string; verifier: string }> {
    const { verifier, challenge } = pkcePair();
    const back = await consent(api, authorizationUrl(api, client, challenge), owner);
    return { code: back.searchParams.get('code') as string, verifier };
  }

  const exchange = (code: string, verifier?: string, extra: Record<string, string> = {}) =>
    tokenRequest(api, {
      grant_type: 'authorization_code',
      client_id: client.client_id,
      code,
      redirect_uri: REDIRECT_URI,
      ...(verifier ? { code_verifier: verifier } : {}),
      ...extra,
    });

  /** Where the authorization endpoint sends the browser for a request it refuses. */
  async function refusal(url: string): Promise<URL> {
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).to.equal(303);
    return new URL(res.headers.get('location') as string);
  }

  it('refuses an authorization request without a code challenge, back to the client with its state', async () => {
    const back = await refusal(authorizationUrl(api, client, '', { code_challenge: undefined, code_challenge_method: undefined, state: 's1' }));
    expect(`${back.origin}${back.pathname}`).to.equal(REDIRECT_URI);
    expect(back.searchParams.get('error')).to.equal('invalid_request');
    expect(back.searchParams.get('error_description')).to.match(/code_challenge/);
    expect(back.searchParams.get('state')).to.equal('s1');
    expect(back.searchParams.has('code')).to.equal(false);
  });

  it('refuses the plain method, and a challenge without a method (which means plain)', async () => {
    const { verifier } = pkcePair();
    for (const method of ['plain', undefined]) {
      const back = await refusal(authorizationUrl(api, client, verifier, { code_challenge_method: method }));
      expect(back.searchParams.get('error'), String(method)).to.equal('invalid_request');
      expect(back.searchParams.get('error_description')).to.match(/S256/);
    }
  });

  it('refuses a wrong or missing code verifier without spending the code', async () => {
    const { code, verifier } = await approvedCode();
    const wrong = await exchange(code, pkcePair().verifier);
    expect(wrong.status).to.equal(400);
    expect(await wrong.json()).to.deep.include({ error: 'invalid_grant' });
    const missing = await exchange(code);
    expect(missing.status).to.equal(400);
    expect((await missing.json()).error).to.equal('invalid_request');
    const malformed = await exchange(code, 'short');
    expect(malformed.status).to.equal(400);

    const right = await exchange(code, verifier);
    expect(right.status).to.equal(200);
  });

  it('refuses a redirect URI, resource or client other than the authorization request', async () => {
    const { code, verifier } = await approvedCode();
    expect((await exchange(code, verifier, { redirect_uri: 'http://127.0.0.1:53682/other' })).status).to.equal(400);
    const target = await exchange(code, verifier, { resource: 'https://elsewhere.example.com/mcp' });
    expect((await target.json()).error).to.equal('invalid_target');
    const other = await registerApp(api);
    const stolen = await tokenRequest(api, {
      grant_type: 'authorization_code',
      client_id: other.client_id,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
    });
    expect((await stolen.json()).error).to.equal('invalid_grant');
    expect((await exchange(code, verifier)).status).to.equal(200);
  });

  it('refuses a reused authorization code and revokes the tokens issued from it', async () => {
    const { code, verifier } = await approvedCode();
    const first = await exchange(code, verifier);
    expect(first.status).to.equal(200);
    const tokens = await first.json();
    expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(200);

    const second = await exchange(code, verifier);
    expect(second.status).to.equal(400);
    const body = await second.json();
    expect(body.error).to.equal('invalid_grant');
    expect(body.error_description).to.match(/already been used/);
    expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(401);
    const refreshed = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
    expect(refreshed.status).to.equal(400);
  });

  it('refuses a code after its two minutes', async () => {
    const { code, verifier } = await approvedCode();
    clock += 121_000;
    const late = await exchange(code, verifier);
    expect(late.status).to.equal(400);
    expect((await late.json()).error_description).to.match(/expired/);
  });

  it('expires access tokens after an hour; the refresh token still gets a new one', async () => {
    const { code, verifier } = await approvedCode();
    const tokens = await (await exchange(code, verifier)).json();
    clock += 3599_000;
    expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(200);
    clock += 2_000;
    const expired = await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) });
    expect(expired.status).to.equal(401);
    expect(expired.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
    const refreshed = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
    expect(refreshed.status).to.equal(200);
    expect((await api.request('/api/v1/agents', { headers: bearer((await refreshed.json()).access_token) })).status).to.equal(200);
  });
});
