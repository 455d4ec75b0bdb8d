import { expect } from 'chai';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, withJson } from '../../support/accounts';

describe('two workspaces cannot see each other', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  it('members, invites and the workspace of one are invisible to the other, by session and by key', async () => {
    const a = await activeOwner(api, { workspace_name: 'A' });
    const b = await activeOwner(api, { workspace_name: 'B' });
    const keyOfB = await apiKeyFor(b.workspaceId);
    await api.request('/api/v1/invites', withJson('POST', { email: 'someone@example.com', role: 'viewer' }, a.auth));

    for (const headers of [b.auth, keyOfB.headers]) {
      const members = await (await api.request('/api/v1/members', { headers })).json();
      expect(members.map((m: { user_id: string }) => m.user_id)).to.deep.equal([b.userId]);
      expect(await (await api.request('/api/v1/invites', { headers })).json()).to.deep.equal([]);
      expect((await (await api.request('/api/v1/workspace', { headers })).json()).name).to.equal('B');
    }
    // A key ignores X-Workspace-ID: it cannot be pointed at another workspace.
    const pointed = await (await api.request('/api/v1/workspace', { headers: { ...keyOfB.headers, 'X-Workspace-ID': a.workspaceId } })).json();
    expect(pointed.id).to.equal(b.workspaceId);
    expect((await api.request('/api/v1/members', { headers: { ...b.auth, 'X-Workspace-ID': a.workspaceId } })).status).to.equal(404);
    expect((await api.request(`/api/v1/members/${a.userId}`, withJson('PATCH', { role: 'viewer' }, b.auth))).status).to.equal(404);
    expect((await api.request(`/api/v1/members/${a.userId}`, { method: 'DELETE', headers: b.auth })).status).to.equal(404);
  });
});
