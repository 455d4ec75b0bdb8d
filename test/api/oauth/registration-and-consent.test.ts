import { expect } from 'chai';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, signUp, withJson, type SignedUp } from '../../support/accounts';
import {
  authorizationUrl,
  bearer,
  connectApp,
  consent,
  hiddenFields,
  pkcePair,
  postForm,
  registerApp,
  REDIRECT_URI,
  tokenRequest,
  workspaceOptions,
} from './oauth-driver';

/** Dynamic client registration, the consent page, and what a connected app may do. */
describe('OAuth registration and consent', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
  });
  after(() => api.close());

  const register = (body: unknown) => api.request('/oauth/register', withJson('POST', body));

  describe('dynamic client registration', () => {
    it('registers a public client with https and loopback redirect URIs', async () => {
      const res = await register({ client_name: 'Desk', redirect_uris: ['https://app.example.com/cb', 'http://localhost:3000/cb', 'http://[::1]:8080/cb'] });
      expect(res.status).to.equal(201);
      const body = await res.json();
      expect(body).to.include({ client_name: 'Desk', token_endpoint_auth_method: 'none' });
      expect(body.client_id).to.match(/^[0-9a-f]{32}$/);
      expect(body.client_id_issued_at).to.be.a('number');
      expect(body.grant_types).to.deep.equal(['authorization_code', 'refresh_token']);
      expect(body).to.not.have.property('client_secret');
    });

    for (const [uri, why] of [
      ['http://app.example.com/cb', 'http off loopback'],
      ['myapp://callback', 'a custom scheme'],
      ['https://app.example.com/cb#frag', 'a fragment'],
      ['/relative', 'a relative URI'],
    ]) {
      it(`refuses a redirect URI with ${why}`, async () => {
        const res = await register({ redirect_uris: [uri] });
        expect(res.status).to.equal(400);
        expect((await res.json()).error).to.equal('invalid_redirect_uri');
      });
    }

    it('refuses confidential clients, other grants and bodies without redirect URIs', async () => {
      for (const body of [
        { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_basic' },
        { redirect_uris: [REDIRECT_URI], grant_types: ['client_credentials'] },
        { redirect_uris: [REDIRECT_URI], response_types: ['token'] },
      ]) {
        const res = await register(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect((await res.json()).error).to.equal('invalid_client_metadata');
      }
      expect((await (await register({ client_name: 'x' })).json()).error).to.equal('invalid_redirect_uri');
    });
  });

  describe('the authorization endpoint', () => {
    it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
      const client = await registerApp(api);
      const { challenge } = pkcePair();
      for (const url of [
        authorizationUrl(api, { ...client, client_id: '0'.repeat(32) }, challenge),
        authorizationUrl(api, client, challenge, { redirect_uri: 'https://attacker.example.com/cb' }),
      ]) {
        const res = await fetch(url, { redirect: 'manual' });
        expect(res.status).to.equal(400);
        expect(res.headers.get('location')).to.equal(null);
        expect(await res.text()).to.include('Cannot connect this app');
      }
    });

    it('refuses another resource with invalid_target', async () => {
      const client = await registerApp(api);
      const res = await fetch(authorizationUrl(api, client, pkcePair().challenge, { resource: 'https://elsewhere.example.com/mcp' }), { redirect: 'manual' });
      expect(res.status).to.equal(303);
      expect(new URL(res.headers.get('location') as string).searchParams.get('error')).to.equal('invalid_target');
    });

    it('keeps the page out of frames and escapes what the client registered', async () => {
      const client = await registerApp(api, { client_name: '<script>alert(1)</script>' });
      const res = await fetch(authorizationUrl(api, client, pkcePair().challenge), { redirect: 'manual' });
      expect(res.headers.get('x-frame-options')).to.equal('DENY');
      expect(res.headers.get('content-security-policy')).to.include("frame-ancestors 'none'").and.include('form-action').and.include('http://127.0.0.1:53682');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const html = await res.text();
      expect(html).to.not.include('<script>');
      expect(html).to.include('&lt;script&gt;');
    });

    it('asks again for the session when the token is not a live session (or is an API key)', async () => {
      const client = await registerApp(api);
      const page = await (await fetch(authorizationUrl(api, client, pkcePair().challenge))).text();
      for (const token of ['not-a-token', 'vak_abc']) {
        const res = await postForm(api, '/oauth/authorize', { ...hiddenFields(page), session_token: token });
        expect(res.status).to.equal(401);
        expect(await res.text()).to.include('name="session_token"');
      }
      const signedOut = await signUp(api);
      expect((await api.request('/api/v1/auth/logout', { method: 'POST', headers: signedOut.auth })).status).to.equal(204);
      const res = await postForm(api, '/oauth/authorize', {
        ...hiddenFields(page),
        session_token: signedOut.token,
        workspace_id: signedOut.workspaceId,
        decision: 'approve',
      });
      expect(res.status).to.equal(401);
      expect(res.headers.get('location')).to.equal(null);
    });

    it('lists only the member’s workspaces and refuses one they are not in', async () => {
      const client = await registerApp(api);
      const other = await activeOwner(api);
      const page = await (await fetch(authorizationUrl(api, client, pkcePair().challenge))).text();
      const picker = await (await postForm(api, '/oauth/authorize', { ...hiddenFields(page), session_token: owner.token })).text();
      expect(workspaceOptions(picker)).to.deep.equal([owner.workspaceId]);
      const res = await postForm(api, '/oauth/authorize', { ...hiddenFields(picker), workspace_id: other.workspaceId, decision: 'approve' });
      expect(res.status).to.equal(400);
      expect(res.headers.get('location')).to.equal(null);
    });

    it('sends access_denied back with the state when the member denies', async () => {
      const client = await registerApp(api);
      const back = await consent(api, authorizationUrl(api, client, pkcePair().challenge, { state: 'keep-me' }), owner, { decision: 'deny' });
      expect(back.searchParams.get('error')).to.equal('access_denied');
      expect(back.searchParams.get('state')).to.equal('keep-me');
      expect(back.searchParams.has('code')).to.equal(false);
    });
  });

  describe('what a connected app may do', () => {
    it('acts in the workspace the member picked, with the member’s role', async () => {
      const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
      const { tokens } = await connectApp(api, viewer, owner.workspaceId);
      expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(200);
      // A viewer cannot place calls or edit agents, and neither can their app.
      const call = await api.request('/api/v1/calls', withJson('POST', { agent_id: '0'.repeat(32), to: '+919800000000' }, bearer(tokens.access_token)));
      expect(call.status).to.equal(403);
      expect(await call.json()).to.include({ permission: 'calls.place' });
      const agent = await api.request('/api/v1/agents', withJson('POST', { name: 'x' }, bearer(tokens.access_token)));
      expect(agent.status).to.equal(403);
      expect((await agent.json()).permission).to.equal('agents.edit');
    });

    it('stops, refresh included, when the member leaves the workspace', async () => {
      const developer = await memberWithRole(api, owner.workspaceId, 'developer');
      const { client, tokens } = await connectApp(api, developer, owner.workspaceId);
      expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(200);
      const removed = await api.request(`/api/v1/members/${developer.userId}`, {
        method: 'DELETE',
        headers: { ...owner.auth, 'X-Workspace-ID': owner.workspaceId },
      });
      expect(removed.status).to.be.within(200, 204);
      expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(401);
      const refreshed = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
      expect(refreshed.status).to.equal(400);
    });

    it('gives no refresh token to a client that did not register the refresh_token grant', async () => {
      const client = await registerApp(api, { grant_types: ['authorization_code'] });
      const { verifier, challenge } = pkcePair();
      const back = await consent(api, authorizationUrl(api, client, challenge), owner);
      const res = await tokenRequest(api, {
        grant_type: 'authorization_code',
        client_id: client.client_id,
        code: back.searchParams.get('code') as string,
        code_verifier: verifier,
        redirect_uri: REDIRECT_URI,
      });
      expect(res.status).to.equal(200);
      const tokens = await res.json();
      expect(tokens.access_token).to.match(/^vao_/);
      expect(tokens).to.not.have.property('refresh_token');
    });

    it('is limited to what a key may do even for an owner (no audit log)', async () => {
      const { tokens } = await connectApp(api, owner);
      expect((await api.request('/api/v1/audit-events', { headers: owner.auth })).status).to.equal(200);
      const audit = await api.request('/api/v1/audit-events', { headers: bearer(tokens.access_token) });
      expect(audit.status).to.equal(403);
      expect((await audit.json()).permission).to.equal('audit.view');
    });
  });
});
