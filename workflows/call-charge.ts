/**
 * What a connected call is charged for, as pure arithmetic (billing rule 2, docs/decisions/0160):
 * the live time, from the stream's arrival to the conversation's end, and a transfer's bridged
 * time. Pure and workflow-safe, so the call workflow's `close()` and unit tests share it.
 */

export interface LiveTimeInput {
  /** Epoch ms the provider reported the call answered. */
  startedAt: number;
  /** Epoch ms the agent went live (the stream arrived); null: the conversation never got its stream. */
  liveFrom: number | null;
  /** Epoch ms the call may have ended by: the conversation's end, a dead node's last heartbeat, the provider's final status (null: not known). */
  endCandidates: (number | null)[];
  /** The workflow's time now, when no end is known. */
  now: number;
}

/**
 * The call's end (the earliest known end, never before the answer) and the live seconds charged,
 * to a tenth of a second. A conversation that never got its stream costs nothing.
 */
export function liveTimeOf(input: LiveTimeInput): { endedAtMs: number; durationSeconds: number } {
  const known = input.endCandidates.filter((t): t is number => t !== null);
  const endedAtMs = Math.max(input.startedAt, Math.min(...(known.length ? known : [input.now])));
  const durationSeconds = input.liveFrom === null ? 0 : Math.round(Math.max(0, endedAtMs - Math.max(input.startedAt, input.liveFrom)) / 100) / 10;
  return { endedAtMs, durationSeconds };
}

/**
 * A transfer's bridged seconds, to a tenth: the destination leg's seconds as the provider
 * reported them, else from the person's answer to the provider's final status (0 without one).
 */
export function bridgedSecondsOf(input: { reportedSeconds: number | null; transferredAt: string; finalStatusAt: string | null }): number {
  const fromAnswer = input.finalStatusAt ? Math.max(0, Date.parse(input.finalStatusAt) - Date.parse(input.transferredAt)) / 1000 : 0;
  return Math.round((input.reportedSeconds ?? fromAnswer) * 10) / 10;
}
