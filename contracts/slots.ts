import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SearchAttributePair } from '@temporalio/common';
import { workflowIds } from './ids';
import { Kind, WorkspaceId } from './search-attributes';

/**
 * Messages of the slot keeper (`slots-<workspace_id>`, task queue `calls`): the one place that
 * holds a workspace's concurrency limit over outbound, inbound and browser calls alike, and the
 * FIFO queue of outbound calls waiting for a slot. Importing this pulls in no workflow code.
 *
 * The protocol:
 * - An outbound call whose calling hours are open joins the queue with `enqueue` (sent with
 *   signal-with-start, so the keeper starts on first use). When a slot is free, the keeper
 *   hands it to the oldest queued call by signalling that call's workflow `slotGranted`
 *   (contracts/calls.ts). A call that cannot take it (gone, or nothing to dial) sends
 *   `release`.
 * - Inbound and browser calls ask with the `tryAcquire` update and are answered at once: a
 *   slot, or a refusal at the limit (they never queue).
 * - Every call that held a slot sends `release` when it ends; `release` also takes a call out
 *   of the queue (hang-up or expiry while queued). All three messages are idempotent.
 * - Staff change the limit with `setLimit` (scripts/limits.ts).
 */

export type CallChannel = 'outbound' | 'inbound' | 'browser';

export interface SlotKeeperInput {
  workspaceId: string;
  /** State carried over by continue-as-new. */
  carried?: SlotKeeperState;
}

export interface EnqueueCall {
  callId: string;
  /** ISO time the call was placed: the queue is ordered by it (oldest first), then by id. */
  queuedAt: string;
}

export interface ReleaseCall {
  callId: string;
}

export interface AcquireSlot {
  callId: string;
  channel: Exclude<CallChannel, 'outbound'>;
}

export interface AcquireResult {
  granted: boolean;
  limit: number;
  active: number;
}

export interface SetLimit {
  limit: number;
}

export interface ActiveCall {
  callId: string;
  channel: CallChannel;
  /** ISO, workflow time the slot was taken. */
  since: string;
}

export interface SlotKeeperState {
  workspaceId: string;
  /** Null until the keeper has read it (plan, or the limit staff set). */
  limit: number | null;
  active: ActiveCall[];
  queue: EnqueueCall[];
}

export const enqueueSignal = defineSignal<[EnqueueCall]>('enqueue');
export const releaseSignal = defineSignal<[ReleaseCall]>('release');
export const setLimitSignal = defineSignal<[SetLimit]>('setLimit');
export const tryAcquireUpdate = defineUpdate<AcquireResult, [AcquireSlot]>('tryAcquire');
export const slotsStateQuery = defineQuery<SlotKeeperState>('state');

export const slotKeeperId = workflowIds.slots;

/**
 * How the keeper starts (signal-with-start from an outbound call, update-with-start from an
 * inbound or browser call): searchable by workspace and kind, and titled for the Temporal UI.
 * A run continued as new keeps the search attributes but not the summary (the server does not
 * carry it over); its current details still name the workspace.
 */
export function slotKeeperStartOptions(workspaceId: string): { typedSearchAttributes: SearchAttributePair[]; staticSummary: string; staticDetails: string } {
  return {
    typedSearchAttributes: [
      { key: WorkspaceId, value: workspaceId },
      { key: Kind, value: 'slot_keeper' },
    ],
    staticSummary: `concurrency slots of workspace ${workspaceId}`,
    staticDetails: [
      `The live calls of workspace \`${workspaceId}\` and its outbound calls waiting for a slot, oldest first.`,
      `Staff change the limit with \`npm run limits:set -- ${workspaceId} <limit>\` (signal \`setLimit\`); query \`state\` lists the calls.`,
    ].join('\n'),
  };
}

/** The slot keeper's signature, for typed clients that import no workflow code (workflows/slots.ts implements it). */
export type SlotKeeperWorkflow = (input: SlotKeeperInput) => Promise<never>;
