/**
 * The voice-to-voice figures operators see (docs/decisions/0220): each spoken turn's time from
 * the caller's last sound reaching the media node to the answer's first audio leaving it, as
 * the call record keeps them (`voice_to_voice_ms`), summed up as nearest-rank percentiles.
 */
export interface VoiceToVoiceFigures {
  voice_to_voice_p50_ms: number | null;
  voice_to_voice_p90_ms: number | null;
}

/** The p-th percentile by nearest rank (a value that was measured, never one between two); null for none. */
export function nearestRankPercentile(values: readonly number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function voiceToVoiceFigures(values: readonly number[]): VoiceToVoiceFigures {
  return { voice_to_voice_p50_ms: nearestRankPercentile(values, 50), voice_to_voice_p90_ms: nearestRankPercentile(values, 90) };
}
