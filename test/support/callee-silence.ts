import type { SimulatedCall } from '../../simulators/telephony/simulator';

/**
 * The callee's silence after answering, as the telephony simulator's callee lived it: from the
 * answer (the call's `in-progress`) to its audio stream opening on a media node, and to the
 * first sound of the agent it heard (the welcome). Null for a call never answered; `firstAudioMs`
 * null when it heard nothing.
 */
export interface CalleeSilence {
  toStreamMs: number | null;
  toFirstAudioMs: number | null;
}

export function calleeSilence(call: Pick<SimulatedCall, 'history' | 'streamConnectedAt' | 'heard'>): CalleeSilence | null {
  const answered = call.history.find((h) => h.status === 'in-progress');
  if (!answered) return null;
  const since = (at: Date | null | undefined) => (at ? new Date(at).getTime() - new Date(answered.at).getTime() : null);
  return { toStreamMs: since(call.streamConnectedAt), toFirstAudioMs: since(call.heard[0]?.at) };
}

/** p50, p95 and max of a list of milliseconds, as seconds with one decimal (for the tests' and benches' lines). */
export function silenceFigures(values: number[]): { p50: number; p95: number; max: number; count: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), max: sorted.at(-1) ?? NaN, count: sorted.length };
}

export function describeSilence(name: string, values: number[]): string {
  const f = silenceFigures(values);
  return `${name}: p50 ${(f.p50 / 1000).toFixed(2)} s, p95 ${(f.p95 / 1000).toFixed(2)} s, max ${(f.max / 1000).toFixed(2)} s (${f.count} calls)`;
}
