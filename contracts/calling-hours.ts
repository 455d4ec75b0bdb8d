/**
 * An agent's calling hours: outbound calls are dialled only while `call_start_hour` <= hour <
 * `call_end_hour` in the agent's `timezone`. Pure (Intl only), so the call workflow can use it
 * with workflow time and stay deterministic.
 */
export interface CallingHours {
  call_start_hour: number;
  call_end_hour: number;
  timezone: string;
}

export interface CallingWindow {
  open: boolean;
  /** How long until the hours open (0 when open). Recomputed after waking, so a DST change cannot misplace it by more than the shift. */
  opensInMs: number;
}

const HOUR_MS = 3_600_000;

export function callingWindow(now: Date, hours: CallingHours): CallingWindow {
  const { hour, minute, second } = wallClock(now, hours.timezone);
  if (hours.call_start_hour <= hour && hour < hours.call_end_hour) return { open: true, opensInMs: 0 };
  const hoursUntilStart = hour < hours.call_start_hour ? hours.call_start_hour - hour : 24 - hour + hours.call_start_hour;
  const intoHourMs = (minute * 60 + second) * 1000 + now.getUTCMilliseconds();
  return { open: false, opensInMs: hoursUntilStart * HOUR_MS - intoHourMs };
}

/**
 * TRAI's hours for commercial calls to Indian numbers (docs/decisions/0207): 09:00 to 21:00 IST,
 * kept for +91 numbers when the workspace's `compliance.india_calling_hours` is on.
 */
export const INDIA_CALLING_HOURS: CallingHours = { call_start_hour: 9, call_end_hour: 21, timezone: 'Asia/Kolkata' };

/** What decides an outbound call's hours: its agent's, and whether its workspace keeps India's. */
export interface CallHoursSource {
  hours: CallingHours;
  /** The workspace's `compliance.india_calling_hours`; absent (agents read before it existed): off. */
  indiaCallingHours?: boolean;
}

/** The hours a call to `toNumber` must fall in: the agent's, and India's for a +91 number when the workspace keeps them. */
export function callingHoursFor(source: CallHoursSource, toNumber: string | undefined): CallingHours[] {
  return source.indiaCallingHours === true && toNumber?.startsWith('+91') ? [source.hours, INDIA_CALLING_HOURS] : [source.hours];
}

/** Days looked ahead for a moment every window is open; beyond, hours that never meet wait a day and look again. */
const LOOK_AHEAD_STEPS = 16;
const DAY_MS = 24 * HOUR_MS;

/**
 * The window where all of `hours` are open at once (their intersection): open now, or how long
 * until they all are. Each step jumps to the latest opening among the closed ones; hours are
 * whole, so a few steps find it. Hours that never meet (say 22-23 IST beside India's 9-21) read
 * as closed for a day: the call waits, and its 24 hours in the queue end it.
 */
export function callingWindowWithin(now: Date, hours: CallingHours[]): CallingWindow {
  let waitedMs = 0;
  for (let step = 0; step < LOOK_AHEAD_STEPS; step++) {
    const at = new Date(now.getTime() + waitedMs);
    const longest = Math.max(...hours.map((h) => callingWindow(at, h).opensInMs));
    if (longest === 0) return waitedMs === 0 ? { open: true, opensInMs: 0 } : { open: false, opensInMs: waitedMs };
    waitedMs += longest;
  }
  return { open: false, opensInMs: DAY_MS };
}

/** The window of an outbound call to `toNumber` (callingHoursFor). */
export function callingWindowOf(now: Date, source: CallHoursSource, toNumber: string | undefined): CallingWindow {
  return callingWindowWithin(now, callingHoursFor(source, toNumber));
}

function wallClock(at: Date, timeZone: string): { hour: number; minute: number; second: number } {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { hour: part('hour'), minute: part('minute'), second: part('second') };
}
