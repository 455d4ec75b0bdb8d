/** Messages of the round-trip probe, shared by the API (starter) and the workflow. */

export interface RoundTripInput {
  probeId: string;
  note: string;
  /** Durable timer before the write, to prove timers fire (0 for none). */
  delaySeconds: number;
}

export interface RoundTripResult {
  probeId: string;
  /** ISO timestamp at which the activity wrote the probe document. */
  writtenAt: string;
  /** Workflow time after the timer, ISO; equals the start time when there was no delay. */
  timerFiredAt: string;
}

/** `roundTripWorkflow`'s signature, for the client that starts it (domain/health/temporal.ts). */
export type RoundTripWorkflow = (input: RoundTripInput) => Promise<RoundTripResult>;
