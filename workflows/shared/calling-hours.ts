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

function wallClock(at: Date, timeZone: string): { hour: number; minute: number; second: number } {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { hour: part('hour'), minute: part('minute'), second: part('second') };
}
