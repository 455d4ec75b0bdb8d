import { expect } from 'chai';
import { ApiKey } from '../../../db/models/api-key';
import { OAuthToken } from '../../../db/models/oauth-token';
import { issueOAuthToken } from '../../../api/auth/oauth-tokens';
import { startApi, type ApiResponse, type RunningApi } from '../../support/api';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';

/**
 * Per-key (and per connected-app token) limits: fixed calendar-minute windows counted on the
 * credential's own document in the store, shared by every API process. The API's clock is pinned 5 seconds into a minute, so no test straddles a minute.
 */
describe('rate limits of keys and connected-app tokens', () => {
  const minute = Math.floor(Date.now() / 60_000) * 60_000 + 10 * 60_000;
  let clock = minute + 5_000;
  let api: RunningApi;
  let second: RunningApi;
  let owner: SignedUp;
  before(async () => {
    api = await startApi({ now: () => new Date(clock) });
    second = await startApi({ now: () => new Date(clock) });
    owner = await activeOwner(api);
  });
  after(async () => {
    await api.close();
    await second.close();
  });
  beforeEach(() => (clock = minute + 5_000));

  const newKey = async (limit?: number): Promise<{ id: string; key: string; headers: Record<string, string> }> => {
    const body = await (
      await api.request('/api/v1/keys', withJson('POST', { name: 'limited' }, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId }))
    ).json();
    if (limit !== undefined) await ApiKey.updateOne({ _id: body.id }, { $set: { rate_limit_per_minute: limit } });
    ids.set(body.key, body.id);
    return { ...body, headers: { 'X-API-Key': body.key } };
  };
  const me = (h: Record<string, string>, on = api) => on.request('/api/v1/auth/me', { headers: h });
  const ids = new Map<string, string>();
  const newKeyId = (h: Record<string, string>) => ids.get(h['X-API-Key'])!;
  const limits = (res: ApiResponse) => ({
    status: res.status,
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
  });
  const reset = String(minute / 1000 + 60);

  it('allows 120 requests a minute by default, with the headers counting down; the 121st is 429 with Retry-After', async () => {
    const { headers } = await newKey();
    const first = await me(headers);
    expect(limits(first)).to.deep.equal({ status: 200, limit: '120', remaining: '119', reset });
    expect(limits(await me(headers))).to.deep.equal({ status: 200, limit: '120', remaining: '118', reset });
    for (let i = 3; i <= 120; i++) {
      const res = await me(headers);
      expect(res.status, `request ${i}`).to.equal(200);
      expect(res.headers.get('x-ratelimit-remaining')).to.equal(String(120 - i));
    }
    const over = await me(headers);
    expect(limits(over)).to.deep.equal({ status: 429, limit: '120', remaining: '0', reset });
    expect(over.headers.get('retry-after')).to.equal('55');
    expect(await over.json()).to.deep.equal({ detail: 'rate limit exceeded; slow down' });
  });

  it('counts every endpoint and every error status of the key, 429 included', async () => {
    const { headers } = await newKey(3);
    expect(limits(await api.request('/api/v1/keys', withJson('POST', { name: '' }, headers)))).to.include({ status: 422, remaining: '2' });
    expect(limits(await api.request('/api/v1/auth/logout', { method: 'POST', headers }))).to.include({ status: 403, remaining: '1' });
    expect(limits(await api.request('/api/v1/keys', { headers }))).to.include({ status: 200, remaining: '0' });
    const over = await api.request('/api/v1/keys', { headers });
    expect(limits(over)).to.include({ status: 429, remaining: '0' });
    expect(over.headers.get('retry-after')).to.equal('55');
  });

  it('shares the count between API processes', async () => {
    const { headers } = await newKey(4);
    expect(limits(await me(headers, api)).remaining).to.equal('3');
    expect(limits(await me(headers, second)).remaining).to.equal('2');
    expect(limits(await me(headers, api)).remaining).to.equal('1');
    expect(limits(await me(headers, second)).remaining).to.equal('0');
    expect((await me(headers, api)).status).to.equal(429);
    expect((await me(headers, second)).status).to.equal(429);
  });

  it('counts concurrent requests exactly, across API processes: the limit is never exceeded and no count is lost', async () => {
    const { headers } = await newKey(10);
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => me(headers, i % 2 ? second : api)));
    const served = answers.filter((res) => res.status === 200);
    expect(served).to.have.length(10);
    expect(answers.filter((res) => res.status === 429)).to.have.length(6);
    // Each request got its own count: the served ones saw every remaining value once.
    expect(served.map((res) => Number(res.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(Object.keys((await ApiKey.findById(newKeyId(headers)).lean())?.counts ?? {})).to.deep.equal([`m${minute / 1000}`]);
  });

  it('starts again with the next calendar minute', async () => {
    const { headers } = await newKey(2);
    await me(headers);
    clock = minute + 59_999;
    expect(limits(await me(headers))).to.include({ status: 200, remaining: '0' });
    const over = await me(headers);
    expect(over.status).to.equal(429);
    expect(over.headers.get('retry-after')).to.equal('1');
    clock = minute + 60_000;
    expect(limits(await me(headers))).to.deep.equal({ status: 200, limit: '2', remaining: '1', reset: String(minute / 1000 + 120) });
    // The count lives on the key, which keeps only the current minute.
    expect((await ApiKey.findById(newKeyId(headers)).lean())?.counts).to.deep.equal({ [`m${minute / 1000 + 60}`]: 1 });
  });

  it('is per key: another key of the workspace is unaffected', async () => {
    const exhausted = await newKey(1);
    const other = await newKey(1);
    expect((await me(exhausted.headers)).status).to.equal(200);
    expect((await me(exhausted.headers)).status).to.equal(429);
    expect(limits(await me(other.headers))).to.include({ status: 200, remaining: '0' });
  });

  it('limits each connected-app token on its own', async () => {
    const issue = () =>
      issueOAuthToken({ workspaceId: owner.workspaceId, userId: owner.userId, clientId: 'c', clientName: 'Claude', ttlSeconds: 3600, now: new Date(clock) });
    const first = await issue();
    const other = await issue();
    await OAuthToken.updateOne({ _id: first.id }, { $set: { rate_limit_per_minute: 2 } });
    const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
    expect(limits(await me(bearer(first.token)))).to.deep.equal({ status: 200, limit: '2', remaining: '1', reset });
    expect(limits(await me(bearer(first.token), second)).remaining).to.equal('0');
    const over = await me(bearer(first.token));
    expect(over.status).to.equal(429);
    expect(await over.json()).to.deep.equal({ detail: 'rate limit exceeded; slow down' });
    expect(limits(await me(bearer(other.token)))).to.include({ status: 200, limit: '120', remaining: '119' });
  });

  it('never applies to session tokens: no headers, and no 429 past 120 requests', async () => {
    const requests = Array.from({ length: 125 }, (_, i) => i);
    for (const i of requests) {
      const res = await me(owner.auth);
      expect(res.status, `request ${i + 1}`).to.equal(200);
      expect(res.headers.get('x-ratelimit-limit')).to.equal(null);
      expect(res.headers.get('x-ratelimit-remaining')).to.equal(null);
    }
  });
});
