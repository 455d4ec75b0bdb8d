import { Schema, model, type InferSchemaType } from 'mongoose';

import { BATCH_STATUSES, type BatchStatus, type ContactCounts } from '../../contracts/batches';

export { BATCH_STATUSES, CONTACT_STATUSES, type BatchStatus, type ContactCounts, type ContactStatus } from '../../contracts/batches';
/** `completed` and `canceled` are final; `paused` queues no more calls (those queued or live go on). */
export const FINAL_BATCH_STATUSES: readonly BatchStatus[] = ['completed', 'canceled'];

const retrySchema = new Schema(
  {
    /** Calls per contact at most (1: no retry). */
    max_attempts: { type: Number, required: true },
    /** Seconds from an unanswered call's end to the next attempt. */
    spacing_seconds: { type: Number, required: true },
  },
  { _id: false },
);

/**
 * One batch of outbound calls from an uploaded CSV. Its contacts are in `batch_contacts`
 * (see batch-contact.ts). The batch workflow (`batch-<id>`) is its writer after creation:
 * status and `counts` (contacts per status, so that lists never read the contacts).
 */
const batchSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    name: { type: String, required: true },
    agent_id: { type: String, required: true },
    agent_name: { type: String, default: '' },
    from_number: { type: String, required: true },
    status: { type: String, enum: BATCH_STATUSES, required: true },
    /** Why the batch paused itself or was canceled by the system (null when a person did it). */
    status_reason: { type: String, default: null },
    start_at: { type: Date, default: null },
    retry: { type: retrySchema, required: true },
    /** The CSV's header, as uploaded: the number column, then the columns that became `user_data`. */
    number_column: { type: String, required: true },
    columns: { type: [String], default: [] },
    file_name: { type: String, default: '' },
    contacts_total: { type: Number, required: true },
    rejected_total: { type: Number, default: 0 },
    counts: { type: Schema.Types.Mixed, required: true },
    created_by: { type: String, default: '' },
    started_at: { type: Date, default: null },
    ended_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'batches', versionKey: false, minimize: false },
);
batchSchema.index({ workspace_id: 1, created_at: -1 });

export type BatchDocument = InferSchemaType<typeof batchSchema> & { _id: string; counts: ContactCounts; status: BatchStatus };
export const Batch = model('Batch', batchSchema);
