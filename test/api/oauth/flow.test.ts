import { expect } from 'chai';
import {
  auth,
  discoverOAuthProtectedResourceMetadata,
  discoverOAuthServerInfo,
  exchangeAuthorization,
  extractResourceMetadataUrl,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { mcpAuthChallenge } from '../../../api/oauth/urls';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, type SignedUp } from '../../support/accounts';
import { bearer, connectApp, consent, postForm, REDIRECT_URI, tokenRequest } from './oauth-driver';
import { connectMcp } from '../mcp/mcp-client';

/** The OAuth flow of connected apps, end to end, with the MCP SDK's own client functions. */
describe('OAuth for connected apps: discovery, registration, consent, tokens', () => {
  let api: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi({
      // The MCP endpoint is another module's; this stands in for its 401 to check the helper it uses.
      extraRoutes: (app) =>
        app.post(
          '/mcp-probe',
          (req, res) =>
            void res
              .status(401)
              .set('WWW-Authenticate', mcpAuthChallenge(req, undefined, 'invalid_token'))
              .end(),
        ),
    });
    owner = await activeOwner(api);
  });
  after(() => api.close());

  it('publishes protected-resource metadata (root and /mcp) and authorization-server metadata', async () => {
    const root = await (await api.request('/.well-known/oauth-protected-resource')).json();
    expect(root).to.include({ resource: api.baseUrl });
    expect(root.authorization_servers).to.deep.equal([api.baseUrl]);
    const mcp = await (await api.request('/.well-known/oauth-protected-resource/mcp')).json();
    expect(mcp).to.include({ resource: `${api.baseUrl}/mcp` });

    const res = await api.request('/.well-known/oauth-authorization-server');
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    const metadata = await res.json();
    expect(metadata).to.include({
      issuer: api.baseUrl,
      authorization_endpoint: `${api.baseUrl}/oauth/authorize`,
      token_endpoint: `${api.baseUrl}/oauth/token`,
      registration_endpoint: `${api.baseUrl}/oauth/register`,
      revocation_endpoint: `${api.baseUrl}/oauth/revoke`,
    });
    expect(metadata.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(metadata.token_endpoint_auth_methods_supported).to.deep.equal(['none']);
    expect(metadata.grant_types_supported).to.deep.equal(['authorization_code', 'refresh_token']);
  });

  it('points a 401 of the MCP endpoint at the metadata, which the SDK follows to this authorization server', async () => {
    const res = await api.request('/mcp-probe', { method: 'POST' });
    expect(res.headers.get('www-authenticate')).to.equal(
      `Bearer error="invalid_token", resource_metadata="${api.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    const resourceMetadataUrl = extractResourceMetadataUrl(res);
    const resource = await discoverOAuthProtectedResourceMetadata(`${api.baseUrl}/mcp`, { resourceMetadataUrl });
    expect(resource.authorization_servers).to.deep.equal([api.baseUrl]);
  });

  it('runs the whole flow with the SDK client: register, authorize with PKCE, exchange, call MCP tools and the API, refresh with rotation, revoke', async () => {
    const info = await discoverOAuthServerInfo(`${api.baseUrl}/mcp`);
    expect(info.authorizationServerUrl).to.equal(api.baseUrl);
    const metadata = info.authorizationServerMetadata;
    const clientInformation = await registerClient(info.authorizationServerUrl, {
      metadata,
      clientMetadata: {
        client_name: 'SDK Assistant',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
    expect(clientInformation.client_id).to.match(/^[0-9a-f]{32}$/);
    expect(clientInformation).to.not.have.property('client_secret');

    const resource = new URL(`${api.baseUrl}/mcp`);
    const { authorizationUrl, codeVerifier } = await startAuthorization(info.authorizationServerUrl, {
      metadata,
      clientInformation,
      redirectUrl: REDIRECT_URI,
      state: 'xyz',
      resource,
    });
    expect(authorizationUrl.searchParams.get('code_challenge_method')).to.equal('S256');
    const back = await consent(api, authorizationUrl.toString(), owner);
    expect(`${back.origin}${back.pathname}`).to.equal(REDIRECT_URI);
    expect(back.searchParams.get('state')).to.equal('xyz');
    expect(back.searchParams.get('iss')).to.equal(api.baseUrl);
    const code = back.searchParams.get('code') as string;

    const tokens = await exchangeAuthorization(info.authorizationServerUrl, {
      metadata,
      clientInformation,
      authorizationCode: code,
      codeVerifier,
      redirectUri: REDIRECT_URI,
      resource,
    });
    expect(tokens.access_token).to.match(/^vao_/);
    expect(tokens.token_type).to.equal('Bearer');
    expect(tokens.expires_in).to.equal(3600);
    expect(tokens.refresh_token).to.match(/^vor_/);

    // The MCP server takes the token, through the SDK's own client: a tool creates an agent
    // in the chosen workspace, which another tool and the HTTP API then see.
    const assistant = await connectMcp(api, tokens.access_token);
    const created = await assistant.call('create_agent', { name: 'Made by an assistant' });
    expect(created.isError, JSON.stringify(created.body)).to.equal(false);
    const listed = await assistant.call('list_agents');
    expect(listed.body.map((a: { id: string }) => a.id)).to.include(created.body.id);
    await assistant.close();

    // The token acts as the owner in the chosen workspace, like a key: keyed endpoints work...
    const agents = await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) });
    expect(agents.status).to.equal(200);
    expect(agents.headers.get('x-ratelimit-limit')).to.equal('120');
    const me = await (await api.request('/api/v1/auth/me', { headers: bearer(tokens.access_token) })).json();
    expect(me.workspace.id).to.equal(owner.workspaceId);
    // ...session-only ones do not.
    const sessions = await api.request('/api/v1/account/sessions', { headers: bearer(tokens.access_token) });
    expect(sessions.status).to.equal(403);
    expect((await sessions.json()).detail).to.match(/connected apps cannot use this endpoint/);
    expect((await api.request('/api/v1/connected-apps', { headers: bearer(tokens.access_token) })).status).to.equal(403);

    const refreshed = await refreshAuthorization(info.authorizationServerUrl, {
      metadata,
      clientInformation,
      refreshToken: tokens.refresh_token as string,
      resource,
    });
    expect(refreshed.refresh_token).to.match(/^vor_/).and.not.equal(tokens.refresh_token);
    expect(refreshed.access_token).to.not.equal(tokens.access_token);
    expect((await api.request('/api/v1/agents', { headers: bearer(refreshed.access_token) })).status).to.equal(200);

    // The refreshed token works on the MCP server until the app revokes it; then it stops at once.
    const refreshedAssistant = await connectMcp(api, refreshed.access_token);
    expect((await refreshedAssistant.call('get_agent', { agent_id: created.body.id })).body.name).to.equal('Made by an assistant');
    await refreshedAssistant.close();
    const revoked = await postForm(api, '/oauth/revoke', { token: refreshed.refresh_token as string, client_id: clientInformation.client_id });
    expect(revoked.status).to.equal(200);
    let refused: { code?: number; message?: string } | null = null;
    await connectMcp(api, refreshed.access_token).catch((error: { code?: number; message?: string }) => (refused = error));
    expect(refused, 'the revoked token was refused').to.not.equal(null);
    expect(refused!.code).to.equal(401);
    expect(refused!.message).to.match(/revoked/);
    expect((await api.request('/api/v1/agents', { headers: bearer(refreshed.access_token) })).status).to.equal(401);

    // The old refresh token is spent.
    const again = await tokenRequest(api, {
      grant_type: 'refresh_token',
      client_id: clientInformation.client_id,
      refresh_token: tokens.refresh_token as string,
    });
    expect(again.status).to.equal(400);
    expect((await again.json()).error).to.equal('invalid_grant');
    expect(again.headers.get('cache-control')).to.equal('no-store');
  });

  it("completes the SDK's own auth() orchestration (discovery, registration, PKCE, exchange, then refresh)", async () => {
    // An MCP client's token store, as an app keeps it; the browser step is the member's consent.
    const store: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string; redirectedTo?: URL } = {};
    const provider = {
      redirectUrl: REDIRECT_URI,
      clientMetadata: {
        client_name: 'Orchestrated Assistant',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      clientInformation: () => store.client,
      saveClientInformation: (info: OAuthClientInformationMixed) => void (store.client = info),
      tokens: () => store.tokens,
      saveTokens: (tokens: OAuthTokens) => void (store.tokens = tokens),
      redirectToAuthorization: (url: URL) => void (store.redirectedTo = url),
      saveCodeVerifier: (verifier: string) => void (store.verifier = verifier),
      codeVerifier: () => store.verifier as string,
    };
    const serverUrl = `${api.baseUrl}/mcp`;
    expect(await auth(provider, { serverUrl })).to.equal('REDIRECT');
    const back = await consent(api, (store.redirectedTo as URL).toString(), owner);
    expect(await auth(provider, { serverUrl, authorizationCode: back.searchParams.get('code') as string })).to.equal('AUTHORIZED');
    const first = store.tokens as OAuthTokens;
    expect((await api.request('/api/v1/agents', { headers: bearer(first.access_token) })).status).to.equal(200);

    // With tokens and a refresh token stored, the next auth() refreshes (and rotates).
    expect(await auth(provider, { serverUrl })).to.equal('AUTHORIZED');
    expect(store.tokens?.refresh_token).to.match(/^vor_/).and.not.equal(first.refresh_token);
  });

  it('revokes the whole family when a rotated refresh token is replayed', async () => {
    const { client, tokens } = await connectApp(api, owner);
    const first = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
    expect(first.status).to.equal(200);
    const newer = await first.json();

    const replay = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
    expect(replay.status).to.equal(400);
    // Everything of the connection stops: the newest refresh token and every access token.
    const next = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: newer.refresh_token });
    expect(next.status).to.equal(400);
    for (const token of [tokens.access_token, newer.access_token])
      expect((await api.request('/api/v1/agents', { headers: bearer(token) })).status).to.equal(401);
  });

  it('refuses a refresh token presented by another client', async () => {
    const { tokens } = await connectApp(api, owner);
    const { client: other } = await connectApp(api, owner);
    const res = await tokenRequest(api, { grant_type: 'refresh_token', client_id: other.client_id, refresh_token: tokens.refresh_token });
    expect(res.status).to.equal(400);
    expect((await res.json()).error).to.equal('invalid_grant');
  });

  it('answers unknown clients 401 invalid_client and unknown grants unsupported_grant_type', async () => {
    const unknown = await tokenRequest(api, { grant_type: 'authorization_code', client_id: 'f'.repeat(32), code: 'x', code_verifier: 'y' });
    expect(unknown.status).to.equal(401);
    expect((await unknown.json()).error).to.equal('invalid_client');
    const { client } = await connectApp(api, owner);
    const grant = await tokenRequest(api, { grant_type: 'password', client_id: client.client_id });
    expect(grant.status).to.equal(400);
    expect((await grant.json()).error).to.equal('unsupported_grant_type');
    const repeated = await api.request('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&grant_type=refresh_token&client_id=${client.client_id}`,
    });
    expect(repeated.status).to.equal(400);
    expect((await repeated.json()).error).to.equal('invalid_request');
  });

  describe('revocation', () => {
    it('stops an access token at once through /oauth/revoke (RFC 7009), leaving the refresh token', async () => {
      const { client, tokens } = await connectApp(api, owner);
      expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(200);
      const res = await postForm(api, '/oauth/revoke', { token: tokens.access_token, token_type_hint: 'access_token', client_id: client.client_id });
      expect(res.status).to.equal(200);
      const after = await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) });
      expect(after.status).to.equal(401);
      expect(after.headers.get('www-authenticate')).to.match(/^Bearer/);
      const refreshed = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
      expect(refreshed.status).to.equal(200);
    });

    it('ends the connection when the app revokes its refresh token; unknown tokens are not an error', async () => {
      const { client, tokens } = await connectApp(api, owner);
      expect((await postForm(api, '/oauth/revoke', { token: tokens.refresh_token, client_id: client.client_id })).status).to.equal(200);
      expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(401);
      const refreshed = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
      expect(refreshed.status).to.equal(400);
      expect((await postForm(api, '/oauth/revoke', { token: 'vao_nothing', client_id: client.client_id })).status).to.equal(200);
      expect((await postForm(api, '/oauth/revoke', { client_id: client.client_id })).status).to.equal(400);
    });

    it('lets a member list their connected apps and revoke one, which stops its token at once', async () => {
      const { client, tokens } = await connectApp(api, owner);
      const list = await api.request('/api/v1/connected-apps', { headers: owner.auth });
      expect(list.status).to.equal(200);
      const apps = await list.json();
      const app = apps.find((a: { client_id: string }) => a.client_id === client.client_id);
      expect(app).to.include({ client_name: 'Test Assistant', last_refreshed_at: null });
      expect(app.workspace).to.deep.equal({ id: owner.workspaceId, name: app.workspace.name });

      const stranger = await activeOwner(api);
      expect((await api.request(`/api/v1/connected-apps/${app.id}`, { method: 'DELETE', headers: stranger.auth })).status).to.equal(404);
      expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(200);

      const revoked = await api.request(`/api/v1/connected-apps/${app.id}`, { method: 'DELETE', headers: owner.auth });
      expect(revoked.status).to.equal(204);
      expect((await api.request('/api/v1/agents', { headers: bearer(tokens.access_token) })).status).to.equal(401);
      const refreshed = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
      expect(refreshed.status).to.equal(400);
      const listed = await (await api.request('/api/v1/connected-apps', { headers: owner.auth })).json();
      expect(listed.map((a: { id: string }) => a.id)).to.not.include(app.id);
      expect((await api.request(`/api/v1/connected-apps/${app.id}`, { method: 'DELETE', headers: owner.auth })).status).to.equal(404);

      // Both ends of the connection are in the workspace's audit log.
      const audit = await (await api.request('/api/v1/audit-events?action=app.*&limit=100', { headers: owner.auth })).json();
      const ofThisApp = audit.items.filter((e: { target: { id: string } }) => e.target.id === client.client_id);
      expect(ofThisApp.map((e: { action: string }) => e.action).sort()).to.deep.equal(['app.connected', 'app.revoked']);
      expect(ofThisApp.every((e: { actor: { type: string; id: string } }) => e.actor.type === 'user' && e.actor.id === owner.userId)).to.equal(true);
    });
  });
});
