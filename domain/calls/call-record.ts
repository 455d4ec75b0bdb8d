import { callView } from './views';
import type { CallDocument } from '../../db/models/call';

/** A transcript as text: one `role: text` line per entry (`transcript_text`, and the analytics requests). */
export function transcriptText(transcript: readonly { role: string; text: string }[]): string {
  return transcript.map((entry) => `${entry.role}: ${entry.text}`).join('\n');
}

/**
 * The call record as `call.completed` carries it (`data.call`): the API's view with every date
 * as a UTC ISO string (webhook times are always UTC, and the event's data is stored as JSON),
 * plus `transcript_text`.
 */
export function completedCallRecord(call: CallDocument): Record<string, unknown> {
  const view = callView(call);
  return { ...(datesAsUtc(view) as Record<string, unknown>), transcript_text: transcriptText(view.transcript) };
}

function datesAsUtc(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(datesAsUtc);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, datesAsUtc(inner)]));
  return value;
}
