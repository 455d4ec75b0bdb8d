import { expect } from 'chai';
import { startApi, TEST_AUTH_CONFIG, type RunningApi } from '../../support/api';
import { signUp } from '../../support/accounts';

describe('session lifetime', () => {
  let api: RunningApi;
  let clock = Date.now();
  before(async () => (api = await startApi({ now: () => new Date(clock) })));
  after(() => api.close());

  it('a session token works until its session expires, then answers 401 with WWW-Authenticate', async () => {
    const me = await signUp(api);
    clock += (TEST_AUTH_CONFIG.sessionTtlSeconds - 5) * 1000;
    expect((await api.request('/api/v1/auth/me', { headers: me.auth })).status).to.equal(200);
    clock += 10_000;
    const expired = await api.request('/api/v1/auth/me', { headers: me.auth });
    expect(expired.status).to.equal(401);
    expect(expired.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
  });
});
