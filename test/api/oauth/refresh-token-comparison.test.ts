import crypto from 'node:crypto';
import { expect } from 'chai';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, type SignedUp } from '../../support/accounts';
import { hashSecretToken } from '../../../api/auth/secret-tokens';
import { connectApp, postForm, tokenRequest } from './oauth-driver';

/**
 * Refresh tokens are compared by their stored hash in code (not by an indexed lookup), and
 * like every other secret in constant time (issue 29, item 5; decision 0171). Timing is too
 * noisy to measure in a test, so this watches the comparison itself: the presented token's
 * hash must reach `crypto.timingSafeEqual`, for a refresh and for a revocation.
 */
describe('refresh-token hashes are compared in constant time', () => {
  let api: RunningApi;
  let owner: SignedUp;
  const original = crypto.timingSafeEqual;
  let compared: string[] = [];
  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
    crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      for (const side of [a, b]) compared.push(Buffer.from(side.buffer, side.byteOffset, side.byteLength).toString('utf8'));
      return original(a, b);
    };
  });
  after(async () => {
    crypto.timingSafeEqual = original;
    await api.close();
  });
  beforeEach(() => (compared = []));

  it('when refreshing', async () => {
    const { client, tokens } = await connectApp(api, owner);
    compared = [];
    const res = await tokenRequest(api, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: tokens.refresh_token });
    expect(res.status).to.equal(200);
    expect(compared).to.include(hashSecretToken(tokens.refresh_token));
  });

  it('when revoking', async () => {
    const { client, tokens } = await connectApp(api, owner);
    compared = [];
    const res = await postForm(api, '/oauth/revoke', { client_id: client.client_id, token: tokens.refresh_token });
    expect(res.status).to.equal(200);
    expect(compared).to.include(hashSecretToken(tokens.refresh_token));
  });
});
