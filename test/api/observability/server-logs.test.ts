import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { ServerLog } from '../../../db/models/server-log';
import { serverLogRecorder } from '../../../api/observability/log-recorder';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, oauthTokenFor, signUp, withJson, type SignedUp } from '../../support/accounts';
import { expectQueryIssue, getOk, logsOnceWritten, type Headers, type LogItem } from './helpers';

const requestIdOf = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

/**
 * Server logs (contract, "Observability" and the pagination table): every API request is
 * recorded with method, path, status, latency, request id, credential and workspace, off the
 * request path; `GET /logs` (logs.view) lists them newest first with filters and bounds, and
 * `GET /logs/sources`. Real API, real database.
 */
describe('server logs', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Headers;
  let other: SignedUp;
  let otherHeaders: Headers;
  let key: Awaited<ReturnType<typeof apiKeyFor>>;

  before(async () => {
    api = await startApi();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    other = await activeOwner(api, { name: 'Ravi Iyer' });
    otherHeaders = { ...other.auth, 'X-Workspace-ID': other.workspaceId };
    key = await apiKeyFor(owner.workspaceId, 'CI deploys');
  });
  after(() => api.close());

  it('records a request made with an API key: its credential (id, shown prefix, name; never the key) and workspace', async () => {
    const requestId = requestIdOf('keyed');
    const res = await api.request('/api/v1/agents?timezone=UTC', { headers: { ...key.headers, 'X-Request-ID': requestId } });
    expect(res.status).to.equal(200);

    const body = await logsOnceWritten(api, `request_id=${requestId}`, headers);
    expect(body.total).to.equal(1);
    const [entry] = body.items;
    expect(Object.keys(entry).sort()).to.deep.equal(['at', 'credential', 'duration_ms', 'id', 'method', 'path', 'request_id', 'source', 'status']);
    expect(entry).to.include({ method: 'GET', path: '/agents', status: 200, request_id: requestId, source: 'api' });
    expect(entry.credential).to.deep.equal({ kind: 'api_key', id: key.id, prefix: key.key.slice(0, 12), name: 'CI deploys' });
    expect(entry.duration_ms).to.be.a('number').and.to.be.at.least(0).and.below(10_000);
    expect(entry.at).to.match(/\+05:30$/); // rendered in the request's zone (default Asia/Kolkata)
    expect(JSON.stringify(body)).not.to.include(key.key);

    const stored = await ServerLog.findById(entry.id).lean();
    expect(stored?.workspace_id).to.equal(owner.workspaceId);
    expect(JSON.stringify(stored)).not.to.include(key.key);
  });

  it('records sessions (the user), connected apps (the token prefix) and the console source', async () => {
    const sessionId = requestIdOf('session');
    const appId = requestIdOf('app');
    const app = await oauthTokenFor(owner.workspaceId, owner.userId);
    expect((await api.request('/api/agents', { headers: { ...headers, 'X-Request-ID': sessionId } })).status).to.equal(200);
    expect((await api.request('/api/v1/agents', { headers: { ...app.headers, 'X-Request-ID': appId } })).status).to.equal(200);

    const session = (await logsOnceWritten(api, `request_id=${sessionId}`, headers)).items[0];
    expect(session).to.include({ source: 'console', path: '/agents' });
    expect(session.credential).to.deep.equal({ kind: 'session', id: owner.userId, prefix: null, name: 'Asha Rao' });
    expect(JSON.stringify(session)).not.to.include(owner.token);

    const viaApp = (await logsOnceWritten(api, `request_id=${appId}`, headers)).items[0];
    expect(viaApp.credential).to.deep.equal({ kind: 'oauth', id: app.id, prefix: app.token.slice(0, 12), name: 'Asha Rao via Test App' });
  });

  it("never shows another workspace's requests", async () => {
    const requestId = requestIdOf('isolated');
    await api.request('/api/v1/agents', { headers: { ...key.headers, 'X-Request-ID': requestId } });
    expect((await logsOnceWritten(api, `request_id=${requestId}`, headers)).total).to.equal(1);
    expect((await getOk(api, `/api/v1/logs?request_id=${requestId}`, otherHeaders)).total).to.equal(0);
    const everything = await getOk(api, '/api/v1/logs?limit=500', otherHeaders);
    expect(everything.items.map((e: LogItem) => e.request_id)).not.to.include(requestId);
    expect(everything.items.every((e: LogItem) => e.credential.id !== key.id)).to.equal(true);
  });

  it('filters by status or status class, method, path prefix, credential, source and time; newest first', async () => {
    const tag = requestIdOf('filters');
    const ok = `${tag}-ok`;
    const missing = `${tag}-missing`;
    const created = `${tag}-created`;
    await api.request('/api/v1/agents', { headers: { ...key.headers, 'X-Request-ID': ok } });
    await api.request(`/api/v1/agents/${newId()}`, { headers: { ...key.headers, 'X-Request-ID': missing } });
    expect((await api.request('/api/v1/agents', withJson('POST', { name: 'Logged agent' }, { ...headers, 'X-Request-ID': created }))).status).to.equal(201);
    const ids = [ok, missing, created];
    // Everything of this test is written once the credential's three entries are there.
    await logsOnceWritten(api, `credential_id=${owner.userId}&method=POST&path=/agents`, headers, (b) => b.items.some((e) => e.request_id === created));
    await logsOnceWritten(api, `credential_id=${key.id}&status=404`, headers, (b) => b.items.some((e) => e.request_id === missing));

    const mine = async (query: string) => {
      const body = await getOk(api, `/api/v1/logs?limit=500&${query}`, headers);
      return body.items.map((e: LogItem) => e.request_id).filter((id: string) => ids.includes(id));
    };
    expect(await mine('status=404')).to.deep.equal([missing]);
    expect(await mine('status=4xx')).to.deep.equal([missing]);
    expect(await mine('status=2xx')).to.have.members([ok, created]);
    expect(await mine('status=201,404')).to.have.members([missing, created]);
    expect(await mine('method=POST')).to.deep.equal([created]);
    expect(await mine('path=/agents/')).to.deep.equal([missing]);
    expect(await mine('path=/calls')).to.deep.equal([]);
    expect(await mine('credential_kind=api_key')).to.have.members([ok, missing]);
    expect(await mine('credential_kind=session')).to.deep.equal([created]);
    expect(await mine(`credential_id=${key.id}`)).to.have.members([ok, missing]);
    expect(await mine('source=console')).to.deep.equal([]);
    expect(await mine('source=api')).to.have.members(ids);

    const all = await getOk(api, '/api/v1/logs?limit=500', headers);
    const ats = all.items.map((e: LogItem) => Date.parse(e.at));
    expect(ats).to.deep.equal([...ats].sort((a, b) => b - a)); // newest first
    expect(all.total).to.be.at.least(all.items.length);

    const future = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
    const past = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
    expect(await mine(`from=${future}`)).to.deep.equal([]);
    expect(await mine(`to=${past}`)).to.deep.equal([]);
    expect(await mine(`from=${past}&to=${future}`)).to.have.members(ids);
  });

  it('pages with limit (default 100, at most 500) and skip; total counts every match', async () => {
    // 105 entries of this workspace, written directly: the page sizes need more than a few.
    const at = Date.now() - 86_400_000;
    await ServerLog.insertMany(
      Array.from({ length: 105 }, (_, i) => ({
        _id: newId(),
        workspace_id: owner.workspaceId,
        at: new Date(at + i * 1000),
        source: 'api',
        method: 'GET',
        path: '/paging',
        status: 200,
        duration_ms: 1,
        request_id: `paging-${i}`,
        credential: { kind: 'api_key', id: key.id, prefix: key.key.slice(0, 12), name: 'CI deploys' },
      })),
    );
    const first = await getOk(api, '/api/v1/logs?path=/paging', headers);
    expect(first.total).to.equal(105);
    expect(first.items).to.have.length(100);
    expect(first.items[0].request_id).to.equal('paging-104');
    const rest = await getOk(api, '/api/v1/logs?path=/paging&skip=100&limit=500', headers);
    expect(rest.items.map((e: LogItem) => e.request_id)).to.deep.equal(['paging-4', 'paging-3', 'paging-2', 'paging-1', 'paging-0']);
    expect((await getOk(api, '/api/v1/logs?path=/paging&limit=1', headers)).items).to.have.length(1);
  });

  it('answers 422 at each bound of its query', async () => {
    const bad: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['skip=-1', 'skip'],
      ['status=abc', 'status'],
      ['status=600', 'status'],
      ['method=FETCH', 'method'],
      ['path=calls', 'path'],
      ['credential_kind=password', 'credential_kind'],
      ['credential_id=xyz', 'credential_id'],
      ['source=webhooks', 'source'],
      ['from=yesterday', 'from'],
    ];
    for (const [query, field] of bad) await expectQueryIssue(await api.request(`/api/v1/logs?${query}`, { headers }), field);
    expect((await api.request('/api/v1/logs?limit=500&skip=0', { headers })).status).to.equal(200);
  });

  it('is for members and keys of the workspace: logs.view (every role has it), no credentials is 401', async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect((await api.request('/api/v1/logs', { headers: viewer.headers })).status).to.equal(200);
    expect((await api.request('/api/v1/logs', { headers: key.headers })).status).to.equal(200);
    expect((await api.request('/api/v1/logs')).status).to.equal(401);
    const onboarding = await signUp(api);
    const inactive = await api.request('/api/v1/logs', { headers: onboarding.auth });
    expect(inactive.status).to.equal(403);
    expect((await inactive.json()).code).to.equal('workspace_inactive');
  });

  it('lists the log sources (logs.view, keys too)', async () => {
    const sources = await getOk(api, '/api/v1/logs/sources', key.headers);
    expect(sources.map((s: { id: string }) => s.id)).to.deep.equal(['api', 'console']);
    for (const source of sources) expect(Object.keys(source).sort()).to.deep.equal(['description', 'id', 'name']);
    expect((await api.request('/api/v1/logs/sources')).status).to.equal(401);
  });

  it('writes the entries after the response, in batches (the recorder holds them until it flushes)', async () => {
    const requestId = requestIdOf('deferred');
    expect((await api.request('/api/v1/agents', { headers: { ...key.headers, 'X-Request-ID': requestId } })).status).to.equal(200);
    // Right after the response the entry is, at most, waiting in the recorder; a flush writes it.
    await serverLogRecorder.flush();
    expect(await ServerLog.countDocuments({ request_id: requestId })).to.equal(1);
  });
});
