/**
 * Time zones and date rendering. Dates leave the API as ISO 8601 with the offset of the
 * zone the caller asked for; webhooks always use UTC (`+00:00`).
 */

// IANA names only: letters, digits, `_ + - /`. Rejects offset strings ("+05:30") that newer
// engines would otherwise accept as zones.
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

// Known names by lower case, to give back the usual spelling of `asia/tokyo`. ICU resolves
// some current names to legacy ones (Asia/Kolkata -> Asia/Calcutta), so a valid name the
// caller spelled is kept rather than replaced by ICU's resolution.
const KNOWN_ZONES = new Map([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Asia/Kolkata'].map((zone) => [zone.toLowerCase(), zone]));

/** The zone name to use and echo (usual spelling when known), or null when there is no such zone. */
export function canonicalTimeZone(name: string): string | null {
  const known = KNOWN_ZONES.get(name.toLowerCase());
  if (known) return known;
  if (!IANA_NAME.test(name)) return null;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    return null;
  }
  return name;
}

/**
 * Every zone `timezone` accepts, with the spelling the API echoes (Asia/Kolkata, not
 * Asia/Calcutta): the list /masters answers and the served OpenAPI document enumerates.
 * (Any letter case of these, and the older IANA aliases the runtime knows, are accepted too.)
 */
export function listedTimeZones(): string[] {
  const names = new Set<string>();
  for (const name of [...Intl.supportedValuesOf('timeZone'), 'UTC', 'Asia/Kolkata']) {
    const canonical = canonicalTimeZone(name);
    if (canonical) names.add(canonical);
  }
  names.delete('Asia/Calcutta'); // ICU's legacy name of Asia/Kolkata
  return [...names].sort();
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

function offsetFormatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = offsetFormatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    offsetFormatters.set(zone, formatter);
  }
  return formatter;
}

// Offsets change only at transitions, which tzdb places on 15-minute boundaries of UTC; so one
// Intl lookup serves every instant of a zone within the same 15 minutes.
const OFFSET_SLOT_MS = 15 * 60 * 1000;
const offsetCache = new Map<string, number>();

/** The zone's UTC offset in minutes at that instant. */
function offsetMinutes(date: Date, zone: string): number {
  const key = `${zone}|${Math.floor(date.getTime() / OFFSET_SLOT_MS)}`;
  let offset = offsetCache.get(key);
  if (offset === undefined) {
    const name =
      offsetFormatterFor(zone)
        .formatToParts(date)
        .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
    // longOffset reads "GMT+05:30", or just "GMT" at offset zero.
    const match = /^GMT([+-])(\d{2}):(\d{2})/.exec(name);
    offset = match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
    if (offsetCache.size > 10_000) offsetCache.clear();
    offsetCache.set(key, offset);
  }
  return offset;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `2026-11-21T06:12:20.123+05:30`: the instant as wall time in `zone` with its offset. */
export function formatInZone(date: Date, zone: string): string {
  const offset = offsetMinutes(date, zone);
  const wall = new Date(date.getTime() + offset * 60_000);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}` +
    `T${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}.${pad(wall.getUTCMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** Fields rendered as dates: `at`, `date`, `timestamp` and every `*_at`. */
export function isDateFieldName(key: string): boolean {
  return key === 'at' || key === 'date' || key === 'timestamp' || key.endsWith('_at');
}

// A full ISO date-time (a bare `2026-11-21` date is left as it is).
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A copy of `value` with every date field rendered in `zone`. Date objects and ISO
 * date-time strings under date-named keys are converted; everything else is kept.
 */
export function renderDates(value: unknown, zone: string): unknown {
  if (Array.isArray(value)) return value.map((item) => renderDates(item, zone));
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    out[key] = isDateFieldName(key) ? renderDateField(field, zone) : renderDates(field, zone);
  }
  return out;
}

function renderDateField(field: unknown, zone: string): unknown {
  if (field instanceof Date) return Number.isNaN(field.getTime()) ? null : formatInZone(field, zone);
  if (typeof field === 'string' && ISO_DATE_TIME.test(field)) return formatInZone(new Date(field), zone);
  return renderDates(field, zone);
}
