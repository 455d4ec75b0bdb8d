import { workflowIds } from './ids';

/**
 * The post-call analytics workflow (`analytics-<call_id>`, task queue `analytics`), shared by
 * its starter (the call workflow, as a child after `call.ended`) and the workflow. Importing
 * this pulls in no workflow code.
 */

export interface AnalyticsWorkflowInput {
  callId: string;
  workspaceId: string;
  agentId: string;
  /** The timeline sequence number `call.completed` must use (the call workflow's next one). */
  sequence: number;
}

/** What was saved on the call; `error` is the analytics failure recorded as `analytics_error`. */
export interface AnalyticsResult {
  summary: string | null;
  extracted: Record<string, unknown> | null;
  error: string | null;
}

export const analyticsWorkflowId = (callId: string) => workflowIds.analytics(callId);
