import { expect } from 'chai';
import { bridgedSecondsOf, liveTimeOf } from '../../workflows/call-charge';

const T0 = Date.parse('2026-11-28T10:00:00.000Z');

/** The call workflow's charge arithmetic (workflows/call-charge.ts): what `close()` charges. */
describe('call charge: live time', () => {
  it('charges from the stream to the earliest known end, to a tenth of a second', () => {
    const charged = liveTimeOf({ startedAt: T0, liveFrom: T0 + 500, endCandidates: [T0 + 42_549, null, T0 + 43_000], now: T0 + 99_000 });
    expect(charged).to.deep.equal({ endedAtMs: T0 + 42_549, durationSeconds: 42 });
  });

  it('rounds to the nearest tenth: 12.35 s live is 12.4, 12.34 s is 12.3', () => {
    expect(liveTimeOf({ startedAt: T0, liveFrom: T0, endCandidates: [T0 + 12_350], now: T0 }).durationSeconds).to.equal(12.4);
    expect(liveTimeOf({ startedAt: T0, liveFrom: T0, endCandidates: [T0 + 12_340], now: T0 }).durationSeconds).to.equal(12.3);
  });

  it('never live (no stream): nothing charged, whatever the end', () => {
    expect(liveTimeOf({ startedAt: T0, liveFrom: null, endCandidates: [T0 + 60_000], now: T0 + 60_000 }).durationSeconds).to.equal(0);
  });

  it('counts from the answer when the stream came before it, and never before the answer', () => {
    expect(liveTimeOf({ startedAt: T0 + 1_000, liveFrom: T0, endCandidates: [T0 + 11_000], now: T0 }).durationSeconds).to.equal(10);
    // An end reported before the answer (clock skew) ends the call at the answer: 0 s.
    expect(liveTimeOf({ startedAt: T0 + 1_000, liveFrom: T0, endCandidates: [T0 + 500], now: T0 })).to.deep.equal({
      endedAtMs: T0 + 1_000,
      durationSeconds: 0,
    });
  });

  it('with no known end, ends now', () => {
    expect(liveTimeOf({ startedAt: T0, liveFrom: T0, endCandidates: [null, null], now: T0 + 7_000 })).to.deep.equal({
      endedAtMs: T0 + 7_000,
      durationSeconds: 7,
    });
  });
});

describe('call charge: bridged time of a transfer', () => {
  it("takes the destination leg's reported seconds, to a tenth", () => {
    expect(bridgedSecondsOf({ reportedSeconds: 61.26, transferredAt: '2026-11-28T10:00:00.000Z', finalStatusAt: '2026-11-28T10:05:00.000Z' })).to.equal(61.3);
  });

  it("without them, counts from the person's answer to the provider's final status", () => {
    expect(bridgedSecondsOf({ reportedSeconds: null, transferredAt: '2026-11-28T10:00:00.000Z', finalStatusAt: '2026-11-28T10:01:30.040Z' })).to.equal(90);
  });

  it('without either, or with a final status before the answer, is 0', () => {
    expect(bridgedSecondsOf({ reportedSeconds: null, transferredAt: '2026-11-28T10:00:00.000Z', finalStatusAt: null })).to.equal(0);
    expect(bridgedSecondsOf({ reportedSeconds: null, transferredAt: '2026-11-28T10:00:00.000Z', finalStatusAt: '2026-11-28T09:59:00.000Z' })).to.equal(0);
  });
});
