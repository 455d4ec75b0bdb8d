import type { SimulatedCall } from '../../simulators/telephony/simulator';

/**
 * The latencies a caller hears, measured on the simulated callee's side of the audio stream
 * (issue 32), from what its SimulatedCaller recorded:
 * - voice-to-voice, per line the callee said: from the line's last sample leaving its mouth to
 *   the first audible sample of the agent's next utterance, when that utterance began before
 *   the callee's next line (a line the agent let pass unanswered, or talked over, has none);
 * - greeting: from the answer (the call's `in-progress`) to the first audible sample of the
 *   first utterance it heard (the welcome).
 * Both include the telephony legs, each way, as the simulator delays them.
 */
export interface CallerLatency {
  voiceToVoiceMs: number[];
  greetingMs: number | null;
}

type Heard = Pick<SimulatedCall, 'history' | 'heard' | 'said'>;

export function callerLatency(call: Heard): CallerLatency {
  const heardAt = call.heard.map((h) => new Date(h.at).getTime());
  const voiceToVoiceMs: number[] = [];
  call.said.forEach((line, index) => {
    if (!line.endedAt) return;
    const ended = new Date(line.endedAt).getTime();
    const next = call.said[index + 1];
    const nextStarted = next ? new Date(next.at).getTime() : Infinity;
    const answer = heardAt.find((at) => at >= ended);
    if (answer !== undefined && answer < nextStarted) voiceToVoiceMs.push(answer - ended);
  });
  const answered = call.history.find((h) => h.status === 'in-progress');
  const greetingMs = answered && heardAt.length ? heardAt[0]! - new Date(answered.at).getTime() : null;
  return { voiceToVoiceMs, greetingMs };
}

/** The p-th percentile (nearest rank) of `values`; NaN for none. */
export function nearestRank(values: readonly number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
