import { log, proxyActivities, setCurrentDetails, sleep, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { RoundTripInput, RoundTripResult } from '../contracts/roundtrip';

const { recordProbe } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 5, initialInterval: '200 milliseconds' },
});

/**
 * Proves every layer end to end: the API starts it, an optional durable timer fires, an
 * activity writes to MongoDB, and the API reads the document back. Ops can start one from
 * `POST /health/roundtrip` and watch it in the Temporal UI.
 */
export async function roundTripWorkflow(input: RoundTripInput): Promise<RoundTripResult> {
  if (input.delaySeconds > 0) {
    setCurrentDetails(`waiting ${input.delaySeconds}s on a durable timer`);
    await sleep(input.delaySeconds * 1000);
  }
  const timerFiredAt = new Date().toISOString(); // workflow time: deterministic on replay
  setCurrentDetails('writing the probe document');
  const { writtenAt } = await recordProbe({
    probeId: input.probeId,
    note: input.note,
    workflowId: workflowInfo().workflowId,
  });
  log.info('round trip recorded', { probeId: input.probeId });
  setCurrentDetails('done');
  return { probeId: input.probeId, writtenAt, timerFiredAt };
}
