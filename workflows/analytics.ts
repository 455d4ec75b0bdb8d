import { ActivityFailure, log, patched, proxyActivities, proxyLocalActivities, setCurrentDetails } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { AnalyticsResult, AnalyticsWorkflowInput } from '../contracts/analytics';

type Activities = ReturnType<typeof createActivities>;

// Language-model work: a provider having a bad minute is retried with backoff (2 s, 4 s, 8 s,
// 16 s), but a call must not wait for its record for ever: after the fifth failure the call
// completes without analytics.
const { analyzeCall } = proxyActivities<Activities>({
  startToCloseTimeout: '60 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});
// Database and Temporal calls: retried until they are back (`call.completed` must go out).
const COMPLETE_CALL_OPTIONS = { startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', maximumInterval: '30 seconds' } } as const;
const { completeCall: completeCallActivity } = proxyActivities<Activities>(COMPLETE_CALL_OPTIONS);
const { completeCall: completeCallLocally } = proxyLocalActivities<Activities>(COMPLETE_CALL_OPTIONS);

/**
 * Analytics started since this patch write `call.completed` in a local activity (a store step
 * like the call workflow's, docs/decisions/0162): one workflow task and one activity task fewer
 * per call. A run whose history began before keeps the activity, so that it replays.
 */
export const LOCAL_COMPLETE_CALL_PATCH = 'analytics-complete-local';

/**
 * Post-call analytics of one connected call (`analytics-<call_id>`, task queue `analytics`),
 * started by the call workflow after `call.ended`: the summary and the extractions, saved on
 * the call; then `call.completed` once, with the final record, at the sequence the call
 * workflow handed over. When the model keeps failing, the call completes anyway with the
 * failure recorded as `analytics_error`.
 */
export async function analyticsWorkflow(input: AnalyticsWorkflowInput): Promise<AnalyticsResult> {
  const { callId, workspaceId, agentId } = input;
  let result: AnalyticsResult;
  setCurrentDetails('summarizing and extracting with the language model');
  try {
    result = { ...(await analyzeCall({ callId, workspaceId, agentId })), error: null };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const reason = error.cause?.message ?? error.message;
    log.warn('post-call analytics failed; the call completes without them', { callId, error: reason });
    result = { summary: null, extracted: null, error: reason };
  }
  setCurrentDetails(`${result.error ? `analytics failed (${result.error})` : 'analytics saved'}: sending call.completed`);
  const completeCall = patched(LOCAL_COMPLETE_CALL_PATCH) ? completeCallLocally : completeCallActivity;
  await completeCall({ callId, workspaceId, agentId, sequence: input.sequence, error: result.error });
  setCurrentDetails(result.error ? `call.completed sent without analytics: ${result.error}` : 'call.completed sent with the summary and extractions');
  return result;
}
