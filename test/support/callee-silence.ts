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

/**
 * Where one callee's silence went, in milliseconds from one step to the next (null where a step
 * did not happen): its answer request waiting behind the call's earlier callbacks (the simulated
 * provider posts a call's callbacks in order, the ring aside), our API answering it, the stream opening on the media node the answer
 * named, and the media node's first audio after that.
 */
export interface SilenceSteps {
  callId: string;
  queuedMs: number | null;
  answerUrlMs: number | null;
  connectMs: number | null;
  firstAudioMs: number | null;
  totalMs: number | null;
}

export function silenceSteps(
  call: Pick<SimulatedCall, 'providerCallId' | 'history' | 'callbacks' | 'answerUrl' | 'streamConnectedAt' | 'heard'>,
): SilenceSteps | null {
  const answered = call.history.find((h) => h.status === 'in-progress')?.at;
  if (!answered) return null;
  const request = call.callbacks.find((c) => c.status === 'in-progress' && c.url === call.answerUrl);
  const between = (from: Date | null | undefined, to: Date | null | undefined) => (from && to ? new Date(to).getTime() - new Date(from).getTime() : null);
  return {
    // Our call id, from the answer URL we gave the provider (`.../calls/{id}/answer`), to find the call in the logs.
    callId: /\/calls\/([^/]+)\/answer(?:\?|$)/.exec(call.answerUrl)?.[1] ?? call.providerCallId,
    queuedMs: between(answered, request?.sentAt),
    answerUrlMs: between(request?.sentAt, request?.deliveredAt),
    connectMs: between(request?.deliveredAt, call.streamConnectedAt),
    firstAudioMs: between(call.streamConnectedAt, call.heard[0]?.at),
    totalMs: between(answered, call.heard[0]?.at),
  };
}

/** The `count` longest silences to first audio, one line each with its steps (for a test's or bench's output). */
export function describeSlowestSilences(steps: SilenceSteps[], count = 5): string[] {
  const ms = (v: number | null) => (v === null ? '-' : `${v} ms`);
  return [...steps]
    .sort((a, b) => (b.totalMs ?? Infinity) - (a.totalMs ?? Infinity))
    .slice(0, count)
    .map(
      (s) =>
        `${ms(s.totalMs)} (call ${s.callId}): behind earlier callbacks ${ms(s.queuedMs)}, answer URL ${ms(s.answerUrlMs)}, stream opening ${ms(s.connectMs)}, first audio ${ms(s.firstAudioMs)}`,
    );
}
