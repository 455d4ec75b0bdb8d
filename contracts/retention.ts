/**
 * The retention sweep (docs/decisions/0215): a Temporal Schedule starts `retentionWorkflow`
 * on the `ops` queue; each run erases, in bounded batches, the recordings and the words of calls
 * older than their workspace's `retention.recordings_days` and `retention.transcripts_days`.
 */
export const RETENTION_SCHEDULE_ID = 'retention-sweep';
export const RETENTION_WORKFLOW_TYPE = 'retentionWorkflow';

export type RetentionKind = 'recordings' | 'transcripts';

export interface RetentionRunInput {
  /** Items one activity erases at most (default 100). */
  batchSize?: number;
  /** Batches of each kind one run takes at most (default 50); what is left waits for the next run. */
  maxBatches?: number;
}

export interface RetentionRunResult {
  recordings: number;
  transcripts: number;
  /** True when a kind stopped at maxBatches with more to erase. */
  more: boolean;
}

export interface EraseExpiredInput {
  kind: RetentionKind;
  batchSize: number;
}
