import { expect } from 'chai';
import { callingHoursFor, callingWindowOf, callingWindowWithin, INDIA_CALLING_HOURS } from '../../contracts/calling-hours';

const HOUR_MS = 3_600_000;
/** A moment given as its wall clock in India (UTC+05:30). */
const ist = (day: number, hour: number, minute = 0) => new Date(Date.UTC(2026, 0, day, hour, minute) - 5.5 * HOUR_MS);
const ALL_DAY = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };

/** Calling hours as an intersection of windows, and India's hours for +91 numbers (docs/decisions/0207). */
describe("calling hours: the intersection of the agent's and India's", () => {
  it("India's window applies to +91 numbers only, and only when the workspace keeps it", () => {
    expect(callingHoursFor({ hours: ALL_DAY, indiaCallingHours: true }, '+919812345678')).to.deep.equal([ALL_DAY, INDIA_CALLING_HOURS]);
    expect(callingHoursFor({ hours: ALL_DAY, indiaCallingHours: true }, '+14155550123')).to.deep.equal([ALL_DAY]);
    expect(callingHoursFor({ hours: ALL_DAY, indiaCallingHours: false }, '+919812345678')).to.deep.equal([ALL_DAY]);
    // Agents read before the setting existed carry no flag: the agent's hours alone, as before.
    expect(callingHoursFor({ hours: ALL_DAY }, '+919812345678')).to.deep.equal([ALL_DAY]);
  });

  it('a +91 call at 22:00 IST waits until 09:00 IST, whatever the agent allows', () => {
    const window = callingWindowOf(ist(10, 22), { hours: ALL_DAY, indiaCallingHours: true }, '+919812345678');
    expect(window).to.deep.equal({ open: false, opensInMs: 11 * HOUR_MS });
    expect(callingWindowOf(ist(10, 20, 59), { hours: ALL_DAY, indiaCallingHours: true }, '+919812345678').open).to.equal(true);
    expect(callingWindowOf(ist(10, 21), { hours: ALL_DAY, indiaCallingHours: true }, '+919812345678').open).to.equal(false);
    expect(callingWindowOf(ist(10, 22), { hours: ALL_DAY, indiaCallingHours: false }, '+919812345678').open).to.equal(true);
  });

  it('opens when both are open: the later opening of the two, across days and zones', () => {
    // The agent calls 11:00-13:00 in London (UTC in January: 16:30-18:30 IST); India allows 09:00-21:00 IST.
    const london = { call_start_hour: 11, call_end_hour: 13, timezone: 'Europe/London' };
    expect(callingWindowWithin(ist(10, 15), [london, INDIA_CALLING_HOURS])).to.deep.equal({ open: false, opensInMs: 1.5 * HOUR_MS });
    // The agent calls 20:00-23:00 IST: open at 20:00, closed from 21:00 until 20:00 the next day.
    const evening = { call_start_hour: 20, call_end_hour: 23, timezone: 'Asia/Kolkata' };
    expect(callingWindowWithin(ist(10, 20, 30), [evening, INDIA_CALLING_HOURS]).open).to.equal(true);
    expect(callingWindowWithin(ist(10, 21, 30), [evening, INDIA_CALLING_HOURS])).to.deep.equal({ open: false, opensInMs: 22.5 * HOUR_MS });
  });

  it("hours that never meet read as closed for a day (the queue's 24 hours end the call)", () => {
    const lateNight = { call_start_hour: 22, call_end_hour: 23, timezone: 'Asia/Kolkata' };
    expect(callingWindowWithin(ist(10, 12), [lateNight, INDIA_CALLING_HOURS])).to.deep.equal({ open: false, opensInMs: 24 * HOUR_MS });
  });
});
