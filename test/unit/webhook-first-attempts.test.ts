import { expect } from 'chai';
import {
  forceLocalFirstAttempts,
  recordTargetAnswer,
  reserveLocalFirstAttempt,
  SLOW_ATTEMPT_MS,
  type RememberedDelivery,
} from '../../domain/webhooks/first-attempts';

/** The first attempt's fast path (domain/webhooks/first-attempts.ts): which deliveries may attempt locally. */
describe('local first attempts: slow targets', () => {
  before(() => forceLocalFirstAttempts(true));
  after(() => forceLocalFirstAttempts(null));

  let sequence = 0;
  const delivery = (origin: string): RememberedDelivery => ({
    deliveryId: `whd_${sequence++}`,
    eventType: 'call.started',
    requestBody: '{}',
    url: `${origin}/hooks`,
    secret: 'whsec_x',
    active: true,
  });

  it('keeps a target whose attempt has been out SLOW_ATTEMPT_MS without an answer off the fast path, before that attempt times out', () => {
    const origin = 'http://silent.example:8001';
    const start = 1_000_000;
    const first = delivery(origin);
    expect(reserveLocalFirstAttempt(first, start)).to.equal(true);
    // While the first is out but young, others may go local too.
    expect(reserveLocalFirstAttempt(delivery(origin), start + SLOW_ATTEMPT_MS - 1)).to.equal(true);
    // Once one has waited SLOW_ATTEMPT_MS, the target is slow: no more local attempts, also after the stuck ones end.
    expect(reserveLocalFirstAttempt(delivery(origin), start + SLOW_ATTEMPT_MS)).to.equal(false);
    recordTargetAnswer(first.deliveryId, first.url, { latencyMs: 10_000, answered: false }, start + 10_000);
    expect(reserveLocalFirstAttempt(delivery(origin), start + 10_001)).to.equal(false);
    // Another target is not affected.
    expect(reserveLocalFirstAttempt(delivery('http://healthy.example:8002'), start + SLOW_ATTEMPT_MS)).to.equal(true);
  });

  it('keeps a target that answers fast on the fast path', () => {
    const origin = 'http://fast.example:8003';
    let now = 2_000_000;
    for (let i = 0; i < 50; i++) {
      const next = delivery(origin);
      expect(reserveLocalFirstAttempt(next, now)).to.equal(true);
      now += 100;
      recordTargetAnswer(next.deliveryId, next.url, { latencyMs: 40, answered: true }, now);
    }
  });
});
