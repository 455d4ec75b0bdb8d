import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { answerUpdate, callWorkflowId, type AnswerRequest } from '../../workflows/shared/calls';

/**
 * Gives the call's workflow its answer (`answer` update) and returns the media node running
 * the call's conversation: its public WebSocket base, `null` when none took the call in time,
 * or `call-over` when the call has ended (or its workflow is not running).
 */
export async function answerCall(temporal: Client, callId: string, request: AnswerRequest): Promise<string | null | 'call-over'> {
  try {
    const answer = await temporal.workflow.getHandle(callWorkflowId(callId)).executeUpdate(answerUpdate, { args: [request] });
    return answer.ended ? 'call-over' : answer.mediaNodeUrl;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError) return 'call-over';
    throw error;
  }
}
