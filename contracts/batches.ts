import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { workflowIds } from './ids';
import type { CallWorkflowInput } from './calls';

/**
 * Messages of the batch workflow (`batch-<batch_id>`, task queue `calls`), shared by the API
 * and the workflow. Importing this pulls in no workflow code.
 */

export const BATCH_STATUSES = ['scheduled', 'running', 'paused', 'completed', 'canceled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * `voicemail`: an answering machine answered its last call (docs/decisions/0159). `do_not_call`:
 * its number is on the workspace's do-not-call list, so it was not dialled (docs/decisions/0205).
 */
export const CONTACT_STATUSES = [
  'pending',
  'calling',
  'retry-wait',
  'completed',
  'voicemail',
  'no-answer',
  'busy',
  'failed',
  'canceled',
  'do_not_call',
] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];
export type ContactCounts = Record<ContactStatus, number>;

export function emptyCounts(): ContactCounts {
  return Object.fromEntries(CONTACT_STATUSES.map((status) => [status, 0])) as ContactCounts;
}

export interface RetryPolicy {
  /** Calls per contact at most (1: no retry). */
  maxAttempts: number;
  /** Seconds from an unanswered call's end to the next attempt. */
  spacingSeconds: number;
}

/**
 * A contact waiting for its next call: a retry (`retry-wait`, due at `dueAt`, epoch ms), or
 * one whose call was handed back undialled (`pending`, due at once).
 */
export interface WaitingContact {
  index: number;
  status: 'pending' | 'retry-wait';
  /** Calls already counted against the retry policy. */
  attempts: number;
  dueAt: number;
}

/** What a run hands the next when it continues as new. */
export interface BatchCarry {
  status: BatchStatus;
  statusReason: string | null;
  /** The next contact never called yet (all before it were queued at least once). */
  nextIndex: number;
  waiting: WaitingContact[];
  counts: ContactCounts;
  startedAt: string | null;
  runs: number;
}

export interface BatchWorkflowInput {
  batchId: string;
  workspaceId: string;
  agentId: string;
  contactsTotal: number;
  /** ISO; null to start at once. */
  startAt: string | null;
  retry: RetryPolicy;
  /** Continue as new past this many history events (default BATCH_HISTORY_LIMIT; tests lower it). */
  historyLimit?: number;
  carried?: BatchCarry;
}

/** A run continues as new past this many events (well below Temporal's limits): calls in flight end first. */
export const BATCH_HISTORY_LIMIT = 4_000;

export interface BatchControl {
  /** Who asked: a person's name or `key:<name>`. */
  by: string;
}

export interface BatchState {
  status: BatchStatus;
  statusReason: string | null;
  counts: ContactCounts;
  /** Calls of the batch queued or live now. */
  inFlight: number;
  runs: number;
}

/** Each answers once the change is saved on the batch record. */
export const pauseBatchUpdate = defineUpdate<BatchState, [BatchControl]>('pause');
export const resumeBatchUpdate = defineUpdate<BatchState, [BatchControl]>('resume');
export const cancelBatchUpdate = defineUpdate<BatchState, [BatchControl]>('cancel');
export const batchStateQuery = defineQuery<BatchState>('state');

/** One contact's fields the workflow writes; `next_attempt_at` as ISO (activity arguments are JSON). */
export interface ContactChange {
  index: number;
  status: ContactStatus;
  attempts?: number;
  next_attempt_at?: string | null;
}

/** A contact the workflow offers for a call: its call id is chosen by the workflow, so a retried activity places the same call. */
export interface ContactCall {
  index: number;
  callId: string;
  /** This call's number among the contact's attempts (1 for the first). */
  attempt: number;
}

export const batchWorkflowId = workflowIds.batch;

/** The batch workflow's signature, for typed clients that import no workflow code (workflows/batch.ts implements it). */
export type BatchWorkflow = (input: BatchWorkflowInput) => Promise<BatchState>;

/**
 * What was queued. Why no call may be queued now (agent, workspace, credits) is a
 * non-retryable failure of its CallRefusal type; results recorded before refusals were typed
 * carry it as text in `refusal`.
 */
export type QueuedBatchCalls =
  | { refusal: string; queued: 0; inputs: [] }
  | {
      refusal: null;
      queued: number;
      inputs: CallWorkflowInput[];
      /** For the calls' summaries in the Temporal UI (absent from results recorded before it was added). */
      agentName?: string;
    };
