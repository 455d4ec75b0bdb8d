import type { Client } from '@temporalio/client';
import type { BatchStatus, ContactCall, ContactChange, ContactCounts } from '../../contracts/batches';
import { hangUpCallWorkflow } from '../../domain/calls/temporal';
import { dialRefusalOf } from '../../domain/calls/queue';
import { callRefusalFailure } from '../../contracts/refusals';
import { createQueuedCall } from '../../domain/calls/place-call';
import { concurrencyLimitOf } from '../../domain/calls/concurrency-limit';
import { Batch, type BatchDocument } from '../../db/models/batch';
import { BatchContact, batchContactId, batchContactIdRange, type BatchContactDocument } from '../../db/models/batch-contact';
import { Call } from '../../db/models/call';
import type { Clock } from '../clock';
import type { QueuedBatchCalls } from '../../contracts/batches';

export type { QueuedBatchCalls } from '../../contracts/batches';

export interface BatchChanges {
  status: BatchStatus;
  status_reason: string | null;
  counts: ContactCounts;
  started_at: string | null;
  ended_at: string | null;
}

/**
 * What the batch workflow (workflows/batch.ts) reads and writes. The workflow runs these one
 * at a time, so their writes to a batch and its contacts never race; each is safe to retry.
 */
export function createBatchActivities(deps: { clock: Clock; temporal?: Client }) {
  const temporal = () => {
    if (!deps.temporal) throw new Error('the batch activities need a Temporal client in the worker dependencies');
    return deps.temporal;
  };

  return {
    /**
     * Queues calls for the offered contacts, in order, as many as the workspace's concurrency
     * limit leaves room for beside the batch's calls in flight: each call as POST /calls
     * places it (record and queue entry; the workflow starts `call-<id>` as its child), and
     * the contact goes `calling` with its attempt and latest call. Nothing is queued when a
     * call could not be dialled anyway (agent deleted or paused, workspace not active, out of credits).
     */
    async queueBatchCalls(input: {
      batchId: string;
      workspaceId: string;
      agentId: string;
      inFlight: number;
      offered: ContactCall[];
    }): Promise<QueuedBatchCalls> {
      const [{ refusal, agent }, limit, batch] = await Promise.all([
        dialRefusalOf(input.workspaceId, input.agentId),
        concurrencyLimitOf(input.workspaceId),
        Batch.findById(input.batchId, { from_number: 1, created_by: 1 }).lean<Pick<BatchDocument, 'from_number' | 'created_by'>>(),
      ]);
      if (refusal) throw callRefusalFailure(refusal);
      if (!batch) throw new Error(`batch ${input.batchId} does not exist`);
      const taken = input.offered.slice(0, Math.max(0, limit - input.inFlight));
      const at = deps.clock.now();
      const inputs = await Promise.all(
        taken.map(async (offer, position) => {
          const contactId = batchContactId(input.batchId, offer.index);
          const contact = await BatchContact.findById(contactId, { number: 1, user_data: 1 }).lean<Pick<BatchContactDocument, 'number' | 'user_data'>>();
          if (!contact) throw new Error(`contact ${contactId} does not exist`);
          const placed = await createQueuedCall({
            callId: offer.callId,
            workspaceId: input.workspaceId,
            agent: { _id: input.agentId, name: agent.name },
            toNumber: contact.number,
            fromNumber: batch.from_number,
            userData: (contact.user_data ?? {}) as Record<string, unknown>,
            placedBy: batch.created_by,
            // A millisecond apart: the queue takes the oldest first (ties by call id), so file order holds.
            at: new Date(at.getTime() + position),
          });
          await BatchContact.updateOne(
            { _id: contactId },
            { $set: { status: 'calling', attempts: offer.attempt, latest_call_id: offer.callId, next_attempt_at: null, updated_at: at } },
          );
          return placed.input;
        }),
      );
      return { refusal: null, queued: inputs.length, inputs, agentName: agent.name };
    },

    /**
     * Saves the workflow's view: contacts' changes, then the batch's status and counts. With
     * `cancelUncalled`, every contact still waiting for a call is canceled (one pass over the
     * batch's contacts).
     */
    async recordBatchProgress(input: { batchId: string; contacts: ContactChange[]; cancelUncalled: boolean; batch: BatchChanges }): Promise<void> {
      const at = deps.clock.now();
      if (input.contacts.length) {
        await BatchContact.bulkWrite(
          input.contacts.map((change) => {
            const set: Record<string, unknown> = { status: change.status, updated_at: at };
            if (change.attempts !== undefined) set.attempts = change.attempts;
            if (change.next_attempt_at !== undefined) set.next_attempt_at = change.next_attempt_at === null ? null : new Date(change.next_attempt_at);
            return { updateOne: { filter: { _id: batchContactId(input.batchId, change.index) }, update: { $set: set } } };
          }),
          { ordered: false },
        );
      }
      if (input.cancelUncalled) {
        await BatchContact.updateMany(
          { _id: batchContactIdRange(input.batchId), status: { $in: ['pending', 'retry-wait'] } },
          { $set: { status: 'canceled', next_attempt_at: null, updated_at: at } },
        );
      }
      const { status, status_reason, counts, started_at, ended_at } = input.batch;
      await Batch.updateOne(
        { _id: input.batchId },
        {
          $set: {
            status,
            status_reason,
            counts,
            started_at: started_at ? new Date(started_at) : null,
            ended_at: ended_at ? new Date(ended_at) : null,
            updated_at: at,
          },
        },
      );
    },

    /** A canceled batch's calls still waiting in the queue are hung up (as POST /calls/{id}/hangup does); live ones go on. */
    async hangUpQueuedBatchCalls(input: { callIds: string[]; by: string }): Promise<void> {
      await Promise.all(
        input.callIds.map(async (callId) => {
          const call = await Call.findById(callId, { status: 1 }).lean<{ status: string }>();
          if (call?.status !== 'queued') return;
          await hangUpCallWorkflow(temporal(), callId, input.by);
        }),
      );
    },
  };
}
