import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { RetentionKind, RetentionRunInput, RetentionRunResult } from '../contracts/retention';

type Activities = ReturnType<typeof createActivities>;

const { eraseExpired } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute' },
});

/**
 * One run of the retention sweep (docs/decisions/0215), started by the `retention-sweep`
 * Schedule: recordings, then calls' words (transcript, summary, extracted values, events' text,
 * delivery bodies), each in batches of `batchSize`, at most `maxBatches` batches a kind, so that
 * a run stays short and its history small; whatever is left is the next run's.
 */
export async function retentionWorkflow(input: RetentionRunInput = {}): Promise<RetentionRunResult> {
  const batchSize = input.batchSize ?? 100;
  const maxBatches = input.maxBatches ?? 50;
  const result: RetentionRunResult = { recordings: 0, transcripts: 0, more: false };
  for (const kind of ['recordings', 'transcripts'] as RetentionKind[]) {
    for (let batch = 0; ; batch++) {
      if (batch === maxBatches) {
        result.more = true;
        break;
      }
      setCurrentDetails(`erasing expired ${kind}: batch ${batch + 1}; so far ${result.recordings} recordings, ${result.transcripts} calls' words`);
      const { erased, more } = await eraseExpired({ kind, batchSize });
      result[kind] += erased;
      if (!more) break;
    }
  }
  setCurrentDetails(`done: ${result.recordings} recordings and ${result.transcripts} calls' words erased${result.more ? '; more left for the next run' : ''}`);
  return result;
}
