import { formatInZone } from '../../domain/shared/time';
import { voiceToVoiceFigures } from '../../domain/calls/voice-to-voice';

/** The longest range of days one stats request may cover. */
export const MAX_STATS_DAYS = 92;
/** Days shown when the caller gives no range: the last week, today included. */
export const DEFAULT_STATS_DAYS = 7;

/** What a day's numbers are computed from: one call's stored fields. */
export interface CallFacts {
  created_at: Date;
  started_at?: Date | null;
  duration_seconds?: number | null;
  cost_paise?: number | null;
  avg_first_audio_ms?: number | null;
  voice_to_voice_ms?: number[] | null;
}

export interface DayStats {
  date: string;
  calls: number;
  connected_calls: number;
  minutes: number;
  cost_paise: number;
  answer_rate: number;
  avg_first_audio_ms: number | null;
  voice_to_voice_p50_ms: number | null;
  voice_to_voice_p90_ms: number | null;
}

/** `YYYY-MM-DD` of the instant's wall time in the zone. */
export function dayInZone(at: Date, zone: string): string {
  return formatInZone(at, zone).slice(0, 10);
}

/** The zone's UTC offset in minutes at the instant, read from its rendering. */
function offsetMinutesAt(at: number, zone: string): number {
  const match = /([+-])(\d{2}):(\d{2})$/.exec(formatInZone(new Date(at), zone));
  if (!match) return 0;
  return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
}

/**
 * The instant the day begins in the zone (local midnight). Two passes settle the offset
 * when midnight falls near a daylight-saving change.
 */
export function startOfDayInZone(day: string, zone: string): Date {
  const [y, m, d] = day.split('-').map(Number);
  const wallMidnight = Date.UTC(y, m - 1, d);
  let at = wallMidnight - offsetMinutesAt(wallMidnight, zone) * 60_000;
  at = wallMidnight - offsetMinutesAt(at, zone) * 60_000;
  return new Date(at);
}

/** Whether `YYYY-MM-DD` names a day of the calendar (not 2026-02-30). */
export function isCalendarDay(day: string): boolean {
  const [y, m, d] = day.split('-').map(Number);
  return /^\d{4}-\d{2}-\d{2}$/.test(day) && new Date(Date.UTC(y, m - 1, d)).toISOString().slice(0, 10) === day;
}

/** The calendar day after `day` (`YYYY-MM-DD`, no zone involved). */
export function nextDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** How many days from `from` to `to`, both included (0 or less when `to` is before `from`). */
export function dayCount(from: string, to: string): number {
  const utc = (day: string) => {
    const [y, m, d] = day.split('-').map(Number);
    return Date.UTC(y, m - 1, d);
  };
  return Math.round((utc(to) - utc(from)) / 86_400_000) + 1;
}

/** Days from `from` to `to`, both included; empty when `to` is before `from`. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = nextDay(day)) days.push(day);
  return days;
}

/** A calendar day `count` days before `day` (negative: after). */
export function daysBefore(day: string, count: number): string {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d - count)).toISOString().slice(0, 10);
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

export type StatsNumbers = Omit<DayStats, 'date'>;

class Tally {
  calls = 0;
  connected = 0;
  seconds = 0;
  cost = 0;
  audioSum = 0;
  audioCount = 0;
  readonly voiceToVoice: number[] = [];

  add(call: CallFacts): void {
    this.calls += 1;
    if (call.started_at) this.connected += 1;
    this.seconds += call.duration_seconds ?? 0;
    this.cost += call.cost_paise ?? 0;
    if (typeof call.avg_first_audio_ms === 'number') {
      this.audioSum += call.avg_first_audio_ms;
      this.audioCount += 1;
    }
    for (const ms of call.voice_to_voice_ms ?? []) this.voiceToVoice.push(ms);
  }

  numbers(): StatsNumbers {
    return {
      calls: this.calls,
      connected_calls: this.connected,
      minutes: round(this.seconds / 60, 2),
      cost_paise: this.cost,
      answer_rate: this.calls ? round(this.connected / this.calls, 4) : 0,
      avg_first_audio_ms: this.audioCount ? Math.round(this.audioSum / this.audioCount) : null,
      ...voiceToVoiceFigures(this.voiceToVoice),
    };
  }
}

/**
 * Each day's numbers, in order, every day of `days` present (zeros when it had no calls), and
 * the whole range's. A call counts on the day it was created (placed or received), in the
 * zone. Connected: it started (the agent went live). Answer rate: connected over all calls.
 * Average first-audio latency: over the calls that measured one; null when none did (a zero
 * would claim an instant answer). Voice-to-voice p50 and p90: over every spoken turn of the
 * day's calls (docs/decisions/0220), not a mean of the calls' figures; null without turns.
 */
export function dailyStats(calls: readonly CallFacts[], days: readonly string[], zone: string): { days: DayStats[]; totals: StatsNumbers } {
  const byDay = new Map(days.map((date) => [date, new Tally()]));
  const total = new Tally();
  for (const call of calls) {
    const day = byDay.get(dayInZone(call.created_at, zone));
    if (!day) continue;
    day.add(call);
    total.add(call);
  }
  return { days: days.map((date) => ({ date, ...byDay.get(date)!.numbers() })), totals: total.numbers() };
}
