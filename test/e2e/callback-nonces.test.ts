import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { CALLBACK_REPLAY_WINDOW_MS, claimCallbackNonce, releaseCallbackNonce, sweepSettled } from '../../domain/calls/callback-nonces';
import { CallbackNonce, callbackNonceId } from '../../db/models/callback-nonce';

/** The store behind the refusal of replayed telephony callbacks (docs/decisions/0177), on the test FerretDB. */
describe('telephony callback nonces', () => {
  const nonce = () => randomBytes(10).toString('hex');
  const signature = 'p5h6J8bVY0Kx3l8Z0q6nL0wqJ2JQ5m4y8r2b1f0e9dc=';
  // A clock of its own, far from other tests' claims: each case moves it on.
  let clock = Date.UTC(2031, 0, 1);
  const at = (ms: number) => new Date(clock + ms);
  beforeEach(() => {
    clock += 10 * CALLBACK_REPLAY_WINDOW_MS;
  });

  it('takes a nonce and signature once within the window; the same nonce with another signature is another request', async () => {
    const n = nonce();
    expect(await claimCallbackNonce(n, signature, at(0))).to.equal(true);
    expect(await claimCallbackNonce(n, signature, at(1_000))).to.equal(false);
    expect(await claimCallbackNonce(n, signature, at(CALLBACK_REPLAY_WINDOW_MS - 1))).to.equal(false);
    expect(await claimCallbackNonce(n, `x${signature}`, at(2_000))).to.equal(true);
  });

  it('two claims of one request at once: exactly one wins', async () => {
    const n = nonce();
    const results = await Promise.all(Array.from({ length: 5 }, () => claimCallbackNonce(n, signature, at(0))));
    expect(results.filter(Boolean)).to.have.length(1);
  });

  it('takes it again once the window is over (an expired claim not yet swept is taken over), and after a release', async () => {
    const n = nonce();
    expect(await claimCallbackNonce(n, signature, at(0))).to.equal(true);
    expect(await claimCallbackNonce(n, signature, at(CALLBACK_REPLAY_WINDOW_MS))).to.equal(true);
    expect(await claimCallbackNonce(n, signature, at(CALLBACK_REPLAY_WINDOW_MS + 1))).to.equal(false);
    await releaseCallbackNonce(n, signature);
    expect(await claimCallbackNonce(n, signature, at(CALLBACK_REPLAY_WINDOW_MS + 2))).to.equal(true);
  });

  it('deletes expired claims explicitly (no TTL index on FerretDB)', async () => {
    const old = nonce();
    expect(await claimCallbackNonce(old, signature, at(0))).to.equal(true);
    // The sweep runs at most once a minute per process: two minutes on, past the window, the next claim starts it
    // (beside the claim, not before its answer).
    expect(await claimCallbackNonce(nonce(), signature, at(CALLBACK_REPLAY_WINDOW_MS + 120_000))).to.equal(true);
    await sweepSettled();
    expect(await CallbackNonce.countDocuments({ _id: callbackNonceId(old, signature) })).to.equal(0);
  });
});
