import { expect } from 'chai';
import mongoose from 'mongoose';
import { totpCode } from '../../api/auth/totp';
import { resealStoredSecrets } from '../../db/reseal-secrets';
import { keyIdOf, parseDataKeys, useDataKeys } from '../../contracts/secret-box';
import { startApi, type RunningApi } from '../support/api';
import { activeOwner, withJson, type SignedUp } from '../support/accounts';
import { TEST_NEXT_KEY, testDataKeys, useTestDataKeys } from '../support/data-keys';
import { startToolTarget, type ToolTarget } from '../support/tool-target';

const TOKEN = 'Bearer crm-token-at-rest-5521';

/**
 * Secrets at rest (docs/decisions/0196), read as a database dump would show them: the raw
 * documents through the driver, bypassing the models' helpers. No tool header value, webhook
 * signing secret or TOTP secret is there in plaintext; each is sealed under the current key;
 * plaintext values stored before encryption keep working; `npm run keys:rotate` moves every
 * value to a new current key.
 */
describe('secrets at rest', function () {
  this.timeout(60_000);
  let api: RunningApi;
  let target: ToolTarget;
  let owner: SignedUp;
  let headers: Record<string, string>;
  const raw = (collection: string) => mongoose.connection.db!.collection(collection);
  const rawText = async (collection: string, filter: Record<string, unknown>) => JSON.stringify(await raw(collection).find(filter).toArray());

  before(async () => {
    api = await startApi();
    target = await startToolTarget();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
  });
  after(async () => {
    useTestDataKeys();
    await api?.close();
    await target?.close();
  });

  const post = (path: string, body: unknown = {}) => api.request(`/api/v1${path}`, withJson('POST', body, headers));

  async function agentWithToken(): Promise<string> {
    const res = await post('/agents', {
      name: 'At rest',
      tools: [{ name: 'lookup', description: 'Looks up the caller', url: `${target.origin}/echo`, headers: { Authorization: TOKEN } }],
    });
    expect(res.status).to.equal(201);
    return (await res.json()).id;
  }

  async function toolSends(agentId: string): Promise<unknown> {
    target.received.length = 0;
    expect((await post(`/agents/${agentId}/tools/lookup/test`)).status).to.equal(200);
    return target.received[0]?.headers.authorization;
  }

  it("stores tools' header values sealed, in the agent and in its versions", async () => {
    const id = await agentWithToken();
    expect((await post(`/agents/${id}/versions/1/restore`)).status).to.equal(200);
    for (const [collection, filter] of [
      ['agents', { _id: id }],
      ['agent_versions', { agent_id: id }],
    ] as const) {
      const text = await rawText(collection, filter);
      expect(text).to.contain('Authorization');
      expect(text, collection).not.to.contain('crm-token');
      expect(text).to.contain('enc:v1:test:');
    }
    expect(await toolSends(id)).to.equal(TOKEN);
  });

  it('stores webhook signing secrets sealed: endpoints (created and rotated) and the default secret', async () => {
    const created = await (await post('/webhooks', { url: 'https://example.com/hooks' })).json();
    const rotated = await (await post(`/webhooks/${created.id}/rotate-secret`)).json();
    expect((await api.request('/api/v1/webhooks/default-secret', { headers })).status).to.equal(200);
    const defaultSecret = (await (await post('/webhooks/default-secret/rotate')).json()).secret;
    const endpoint = await raw('webhook_endpoints').findOne({ _id: created.id as never });
    const workspaceDefault = await raw('webhook_default_secrets').findOne({ _id: owner.workspaceId as never });
    for (const [stored, secret] of [
      [endpoint, rotated.secret],
      [workspaceDefault, defaultSecret],
    ]) {
      expect(JSON.stringify(stored)).not.to.contain(secret.slice('whsec_'.length));
      expect(keyIdOf(stored!.secret)).to.equal('test');
    }
    expect(JSON.stringify(endpoint)).not.to.contain(created.secret.slice('whsec_'.length));
  });

  it('stores TOTP secrets sealed, pending and enabled, and two-factor sign-in still works', async () => {
    const setup = await (await post('/account/2fa/setup')).json();
    const pending = await raw('users').findOne({ _id: owner.userId as never });
    expect(JSON.stringify(pending)).not.to.contain(setup.secret);
    expect(keyIdOf(pending!.two_factor.pending_secret)).to.equal('test');
    expect((await post('/account/2fa/enable', { code: totpCode(setup.secret, new Date()) })).status).to.equal(200);
    const enabled = await raw('users').findOne({ _id: owner.userId as never });
    expect(JSON.stringify(enabled)).not.to.contain(setup.secret);
    expect(keyIdOf(enabled!.two_factor.secret)).to.equal('test');

    const login = await (await api.request('/api/v1/auth/login', withJson('POST', { email: owner.email, password: owner.password }))).json();
    const code = totpCode(setup.secret, new Date(Date.now() + 30_000));
    expect((await api.request('/api/v1/auth/login/2fa', withJson('POST', { challenge_token: login.challenge_token, code }))).status).to.equal(200);
    expect((await post('/account/2fa/disable', { password: owner.password })).status).to.equal(200);
  });

  it('reads values stored in plaintext before encryption, and keys:rotate seals them and moves every value to the new current key', async () => {
    const id = await agentWithToken();
    // A header and a TOTP secret as an older release stored them.
    const legacyTool = {
      name: 'lookup',
      description: 'Looks up the caller',
      parameters_json: '{"type":"object","properties":{}}',
      method: 'POST',
      url: `${target.origin}/echo`,
      headers_json: JSON.stringify({ Authorization: 'Bearer legacy-plain' }),
      pre_call_message: '',
      timeout_seconds: 8,
    };
    await raw('agents').updateOne({ _id: id as never }, { $set: { tools: [legacyTool] } });
    expect(await toolSends(id)).to.equal('Bearer legacy-plain');
    const legacyTotp = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    await raw('users').updateOne(
      { _id: owner.userId as never },
      { $set: { 'two_factor.enabled': true, 'two_factor.secret': legacyTotp, 'two_factor.last_step': null } },
    );
    const login = await (await api.request('/api/v1/auth/login', withJson('POST', { email: owner.email, password: owner.password }))).json();
    expect(
      (await api.request('/api/v1/auth/login/2fa', withJson('POST', { challenge_token: login.challenge_token, code: totpCode(legacyTotp, new Date()) })))
        .status,
    ).to.equal(200);

    // Rotation: a second key becomes current; the first stays readable until the rewrite is done.
    const next = testDataKeys('test-next');
    useDataKeys(next);
    const counts = await resealStoredSecrets(next);
    expect(counts.agents).to.be.at.least(2);
    expect(counts.agent_versions).to.be.at.least(2);
    expect(counts.webhook_endpoints).to.be.at.least(1);
    expect(counts.webhook_default_secrets).to.be.at.least(1);
    expect(counts.users).to.be.at.least(1);
    expect(Object.values(await resealStoredSecrets(next)).every((n) => n === 0)).to.equal(true);

    const everything = (
      await Promise.all(['agents', 'agent_versions', 'webhook_endpoints', 'webhook_default_secrets', 'users'].map((c) => rawText(c, {})))
    ).join('\n');
    expect(everything).not.to.contain('legacy-plain');
    expect(everything).not.to.contain(legacyTotp);
    expect(everything).not.to.match(/enc:v1:test:/);
    // Only the new key is needed now.
    useDataKeys(parseDataKeys(TEST_NEXT_KEY, undefined));
    expect(await toolSends(id)).to.equal('Bearer legacy-plain');
    const again = await (await api.request('/api/v1/auth/login', withJson('POST', { email: owner.email, password: owner.password }))).json();
    expect(
      (
        await api.request(
          '/api/v1/auth/login/2fa',
          withJson('POST', { challenge_token: again.challenge_token, code: totpCode(legacyTotp, new Date(Date.now() + 30_000)) }),
        )
      ).status,
    ).to.equal(200);
  });
});
