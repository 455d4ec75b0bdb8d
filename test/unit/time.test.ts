import { expect } from 'chai';
import { canonicalTimeZone, formatInZone, isDateFieldName, renderDates } from '../../domain/shared/time';

describe('time zones and date rendering', () => {
  const instant = new Date('2026-01-15T18:45:30.007Z');

  it('renders an instant in a zone with that zone’s offset', () => {
    expect(formatInZone(instant, 'Asia/Kolkata')).to.equal('2026-01-16T00:15:30.007+05:30');
    expect(formatInZone(instant, 'UTC')).to.equal('2026-01-15T18:45:30.007+00:00');
    expect(formatInZone(instant, 'America/New_York')).to.equal('2026-01-15T13:45:30.007-05:00');
    expect(formatInZone(instant, 'Asia/Kathmandu')).to.equal('2026-01-16T00:30:30.007+05:45');
  });

  it('follows daylight saving time', () => {
    expect(formatInZone(new Date('2026-07-01T12:00:00Z'), 'America/New_York')).to.equal('2026-07-01T08:00:00.000-04:00');
    expect(formatInZone(new Date('2026-07-01T12:00:00Z'), 'Europe/London')).to.equal('2026-07-01T13:00:00.000+01:00');
  });

  it('switches offset exactly at a daylight-saving transition', () => {
    expect(formatInZone(new Date('2026-03-08T06:59:59.999Z'), 'America/New_York')).to.equal('2026-03-08T01:59:59.999-05:00');
    expect(formatInZone(new Date('2026-03-08T07:00:00.000Z'), 'America/New_York')).to.equal('2026-03-08T03:00:00.000-04:00');
    expect(formatInZone(new Date('2026-04-04T14:59:59.999Z'), 'Australia/Lord_Howe')).to.equal('2026-04-05T01:59:59.999+11:00');
    expect(formatInZone(new Date('2026-04-04T15:00:00.000Z'), 'Australia/Lord_Howe')).to.equal('2026-04-05T01:30:00.000+10:30');
  });

  it('agrees with Intl for every hour of a year in several zones', () => {
    for (const zone of ['Asia/Kolkata', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'America/St_Johns']) {
      const wall = new Intl.DateTimeFormat('sv-SE', {
        timeZone: zone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
      });
      for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 3_600_000 + 7 * 60_000) {
        const rendered = formatInZone(new Date(t), zone);
        expect(rendered.slice(0, 19).replace('T', ' '), `${zone} ${new Date(t).toISOString()}`).to.equal(wall.format(new Date(t)));
        expect(Date.parse(rendered)).to.equal(t);
      }
    }
  });

  it('renders midnight as 00, not 24', () => {
    expect(formatInZone(new Date('2026-03-01T18:30:00Z'), 'Asia/Kolkata')).to.equal('2026-03-02T00:00:00.000+05:30');
  });

  it('round-trips: the rendered string parses back to the same instant', () => {
    for (const zone of ['Asia/Kolkata', 'Pacific/Chatham', 'America/St_Johns', 'UTC']) {
      expect(Date.parse(formatInZone(instant, zone))).to.equal(instant.getTime());
    }
  });

  it('knows IANA names, in any case, and gives their canonical spelling', () => {
    expect(canonicalTimeZone('Asia/Kolkata')).to.equal('Asia/Kolkata');
    expect(canonicalTimeZone('asia/kolkata')).to.equal('Asia/Kolkata');
    expect(canonicalTimeZone('UTC')).to.equal('UTC');
    expect(canonicalTimeZone('utc')).to.equal('UTC');
    expect(canonicalTimeZone('europe/london')).to.equal('Europe/London');
  });

  it('rejects what is not an IANA zone', () => {
    for (const name of ['Mars/Olympus', '+05:30', 'GMT+5:30', '', '../etc/passwd', 'Asia/Kolkata ']) {
      expect(canonicalTimeZone(name), name).to.equal(null);
    }
  });

  it('treats at, date, timestamp and *_at as date fields, nothing else', () => {
    for (const key of ['at', 'date', 'timestamp', 'created_at', 'next_attempt_at']) expect(isDateFieldName(key), key).to.equal(true);
    for (const key of ['attempts', 'data', 'format', 'status', 'update']) expect(isDateFieldName(key), key).to.equal(false);
  });

  it('renders date fields at any depth and leaves the rest alone', () => {
    const body = {
      created_at: instant,
      name: '2026-01-15T18:45:30.007Z',
      items: [{ at: '2026-01-15T18:45:30.007Z', note: 'x' }],
      nested: { next_attempt_at: null, date: '2026-01-15', meta: { timestamp: instant } },
    };
    expect(renderDates(body, 'Asia/Kolkata')).to.deep.equal({
      created_at: '2026-01-16T00:15:30.007+05:30',
      name: '2026-01-15T18:45:30.007Z',
      items: [{ at: '2026-01-16T00:15:30.007+05:30', note: 'x' }],
      nested: { next_attempt_at: null, date: '2026-01-15', meta: { timestamp: '2026-01-16T00:15:30.007+05:30' } },
    });
    expect(body.created_at).to.equal(instant, 'the input is not mutated');
  });
});
