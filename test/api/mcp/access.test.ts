import { expect } from 'chai';
import { OAuthToken } from '../../../db/models/oauth-token';
import { revokeOAuthToken } from '../../../api/auth/oauth-tokens';
import { activeOwner, apiKeyFor, oauthTokenFor, signUp, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { connectMcp } from './mcp-client';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** Who may talk to /mcp: the API's own credential check, before any MCP message is read. */
describe('MCP server: credentials', function () {
  this.timeout(60_000);
  let api: RunningApi;
  let owner: SignedUp;
  const post = (headers: Record<string, string>, body: unknown = INITIALIZE) =>
    api.request('/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });

  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
  });
  after(() => api?.close());

  it('answers 401 with WWW-Authenticate: Bearer and the resource metadata when the token is missing or not valid', async () => {
    const missing = await post({});
    expect(missing.status).to.equal(401);
    const challenge = missing.headers.get('www-authenticate') ?? '';
    expect(challenge).to.match(/^Bearer /);
    expect(challenge).to.include(`resource_metadata="${api.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    expect(challenge).to.not.include('error=');

    const invalid = await post({ Authorization: 'Bearer vao_not-a-real-token' });
    expect(invalid.status).to.equal(401);
    expect(invalid.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token", resource_metadata="/);

    let refused: unknown;
    await connectMcp(api, 'vao_not-a-real-token').catch((error: unknown) => (refused = error));
    expect((refused as { code?: number }).code).to.equal(401);
  });

  it('stops an expired or revoked token at once', async () => {
    const expired = await oauthTokenFor(owner.workspaceId, owner.userId);
    const session = await connectMcp(api, expired.token);
    expect((await session.call('list_agents')).isError).to.equal(false);
    await OAuthToken.updateOne({ _id: expired.id }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const afterExpiry = await session.client.callTool({ name: 'list_agents', arguments: {} }).catch((error: unknown) => error);
    expect((afterExpiry as { code?: number }).code).to.equal(401);
    await session.close();

    const revoked = await oauthTokenFor(owner.workspaceId, owner.userId);
    expect((await post(revoked.headers)).status).to.equal(200);
    await revokeOAuthToken(revoked.id);
    expect((await post(revoked.headers)).status).to.equal(401);
  });

  it('takes an API key too, and refuses a console session (403)', async () => {
    const key = await apiKeyFor(owner.workspaceId, 'assistant');
    const viaKey = await connectMcp(api, key.key);
    try {
      const created = await viaKey.call('create_agent', { name: 'Made by a key' });
      expect(created.body).to.include({ updated_by: 'key:assistant' });
    } finally {
      await viaKey.close();
    }
    const session = await post(owner.auth);
    expect(session.status).to.equal(403);
    expect((await session.json()).detail).to.match(/connected app .* or an API key/);
  });

  it("counts every message against the token's rate limit (429 past it, with the headers of a key)", async () => {
    const app = await oauthTokenFor(owner.workspaceId, owner.userId);
    await OAuthToken.updateOne({ _id: app.id }, { $set: { rate_limit_per_minute: 2 } });
    const first = await post(app.headers);
    expect(first.status).to.equal(200);
    expect(first.headers.get('x-ratelimit-limit')).to.equal('2');
    expect(first.headers.get('x-ratelimit-remaining')).to.equal('1');
    expect((await post(app.headers)).status).to.equal(200);
    const third = await post(app.headers);
    expect(third.status).to.equal(429);
    expect(third.headers.get('retry-after')).to.match(/^\d+$/);
  });

  it('is stateless: GET is 405; an app of an onboarding workspace reaches what the HTTP API allows while onboarding', async () => {
    const app = await oauthTokenFor(owner.workspaceId, owner.userId);
    const get = await api.request('/mcp', { headers: { ...app.headers, Accept: 'text/event-stream' } });
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');

    const newcomer = await signUp(api);
    const onboardingApp = await oauthTokenFor(newcomer.workspaceId, newcomer.userId);
    const onboarding = await connectMcp(api, onboardingApp.token);
    try {
      expect(await onboarding.call('list_agents')).to.deep.equal({
        isError: true,
        body: { status: 403, detail: 'workspace not active', code: 'workspace_inactive' },
      });
      expect((await onboarding.call('get_limits')).isError).to.equal(false);
      // Billing works before activation (x-access `onboarding`): the tool follows GET /billing.
      const balance = await api.request('/api/v1/billing', { headers: onboardingApp.headers });
      expect(balance.status).to.equal(200);
      const tool = await onboarding.call('get_balance');
      expect(tool.isError).to.equal(false);
      expect(tool.body).to.deep.equal(await balance.json());
    } finally {
      await onboarding.close();
    }
  });
});
