import { expect } from 'chai';
import { recordWorkspaceAudit } from '../../../domain/audit/audit-log';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson, type SignedUp } from '../../support/accounts';
import { expectQueryIssue, getOk, type Headers } from './helpers';

interface AuditItem {
  id: string;
  at: string;
  action: string;
  actor: { type: string; id: string | null; name: string | null };
  target: { type: string; id: string | null; name: string | null };
  ip: string | null;
  details: Record<string, unknown>;
}

/**
 * The audit log (contract, "Observability" and the pagination table): `GET /audit-events`
 * needs audit.view (owner and admin; not keys), lists the workspace's events newest first with
 * filters by actor, action and time, and pages with limit (default 50, max 200) and skip.
 */
describe('audit events', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Headers;
  let otherHeaders: Headers;

  before(async () => {
    api = await startApi();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    const other = await activeOwner(api, { name: 'Ravi Iyer' });
    otherHeaders = { ...other.auth, 'X-Workspace-ID': other.workspaceId };
  });
  after(() => api.close());

  const events = async (query: string, h = headers) => (await getOk(api, `/api/v1/audit-events?${query}`, h)) as { items: AuditItem[]; total: number };

  it('lists what members did, newest first, in the contract shape', async () => {
    const created = await (await api.request('/api/v1/keys', withJson('POST', { name: 'deploys' }, headers))).json();
    expect((await api.request(`/api/v1/keys/${created.id}`, { method: 'DELETE', headers })).status).to.equal(204);

    const body = await events('limit=10');
    const [revoked, made] = body.items;
    expect(revoked).to.deep.include({
      action: 'key.revoked',
      actor: { type: 'user', id: owner.userId, name: 'Asha Rao' },
      target: { type: 'api_key', id: created.id, name: 'deploys' },
    });
    expect(made.action).to.equal('key.created');
    expect(Object.keys(revoked).sort()).to.deep.equal(['action', 'actor', 'at', 'details', 'id', 'ip', 'target']);
    expect(revoked.at).to.match(/\+05:30$/);
    const ats = body.items.map((e) => Date.parse(e.at));
    expect(ats).to.deep.equal([...ats].sort((a, b) => b - a));
    expect(body.items.map((e) => e.action)).to.include('account.signed_up');
  });

  it('filters by actor, actor type, action (exact or a group) and time', async () => {
    const key = await apiKeyFor(owner.workspaceId, 'robot');
    const base = Date.parse('2026-01-10T10:00:00Z');
    const record = (action: string, minutes: number, actor: { type: 'user' | 'api_key'; id: string; name: string }) =>
      recordWorkspaceAudit(owner.workspaceId, { action, actor, target: { type: 'webhook_endpoint', id: null }, at: new Date(base + minutes * 60_000) });
    await record('webhook.created', 0, { type: 'api_key', id: key.id, name: 'key:robot' });
    await record('webhook.updated', 10, { type: 'api_key', id: key.id, name: 'key:robot' });
    await record('webhook.deleted', 20, { type: 'user', id: owner.userId, name: 'Asha Rao' });

    const actions = async (query: string) => (await events(`limit=200&${query}`)).items.map((e) => e.action);
    expect(await actions(`actor=${key.id}`)).to.deep.equal(['webhook.updated', 'webhook.created']);
    expect(await actions('actor_type=api_key')).to.deep.equal(['webhook.updated', 'webhook.created']);
    expect(await actions('action=webhook.deleted')).to.deep.equal(['webhook.deleted']);
    expect(await actions('action=webhook.*')).to.deep.equal(['webhook.deleted', 'webhook.updated', 'webhook.created']);
    expect(await actions('action=webhook.created,webhook.deleted')).to.deep.equal(['webhook.deleted', 'webhook.created']);
    expect(await actions('action=web.*')).to.deep.equal([]); // a group is whole segments
    const iso = (minutes: number) => encodeURIComponent(new Date(base + minutes * 60_000).toISOString());
    expect(await actions(`from=${iso(10)}&to=${iso(20)}`)).to.deep.equal(['webhook.updated']);
    expect(await actions(`from=${iso(10)}&action=webhook.*`)).to.deep.equal(['webhook.deleted', 'webhook.updated']);
    expect(await actions(`to=${iso(0)}&action=webhook.*`)).to.deep.equal([]);
    expect((await events(`actor=${owner.userId}&action=webhook.*`)).total).to.equal(1);
  });

  it("never shows another workspace's events", async () => {
    await recordWorkspaceAudit(owner.workspaceId, {
      action: 'secret.thing',
      actor: { type: 'user', id: owner.userId, name: 'Asha Rao' },
      target: { type: 'x', id: null },
      at: new Date(),
    });
    expect((await events('action=secret.thing')).total).to.equal(1);
    expect((await events('action=secret.thing', otherHeaders)).total).to.equal(0);
    const theirs = await events('limit=200', otherHeaders);
    expect(theirs.items.every((e) => e.actor.id !== owner.userId)).to.equal(true);
  });

  it('pages with limit (default 50, at most 200) and skip; total counts every match', async () => {
    const at = Date.parse('2025-06-01T00:00:00Z');
    for (let i = 0; i < 55; i += 1) {
      await recordWorkspaceAudit(owner.workspaceId, {
        action: 'paging.step',
        actor: { type: 'staff', id: null, name: 'ops' },
        target: { type: 'x', id: String(i) },
        at: new Date(at + i * 1000),
      });
    }
    const first = await events('action=paging.step');
    expect(first.total).to.equal(55);
    expect(first.items).to.have.length(50);
    expect(first.items[0].target.id).to.equal('54');
    const rest = await events('action=paging.step&skip=50&limit=200');
    expect(rest.items.map((e) => e.target.id)).to.deep.equal(['4', '3', '2', '1', '0']);
  });

  it('answers 422 at each bound of its query', async () => {
    const bad: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['skip=-1', 'skip'],
      ['actor=someone', 'actor'],
      ['actor_type=robot', 'actor_type'],
      ['action=Key Created', 'action'],
      [`action=${'a'.repeat(201)}`, 'action'],
      ['from=2026-13-01T00:00:00Z', 'from'],
    ];
    for (const [query, field] of bad) await expectQueryIssue(await api.request(`/api/v1/audit-events?${query}`, { headers }), field);
    expect((await api.request('/api/v1/audit-events?limit=200', { headers })).status).to.equal(200);
  });

  it('needs audit.view: owner and admin yes; developer, viewer and API keys 403 naming it', async () => {
    const admin = await memberWithRole(api, owner.workspaceId, 'admin');
    expect((await api.request('/api/v1/audit-events', { headers: admin.headers })).status).to.equal(200);
    const denied = [
      (await memberWithRole(api, owner.workspaceId, 'developer')).headers,
      (await memberWithRole(api, owner.workspaceId, 'viewer')).headers,
      (await apiKeyFor(owner.workspaceId)).headers,
    ];
    for (const h of denied) {
      const res = await api.request('/api/v1/audit-events', { headers: h });
      expect(res.status).to.equal(403);
      expect(await res.json()).to.include({ permission: 'audit.view' });
    }
    expect((await api.request('/api/v1/audit-events')).status).to.equal(401);
  });
});
