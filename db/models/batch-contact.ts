import { Schema, model, type InferSchemaType } from 'mongoose';
import { CONTACT_STATUSES, type ContactStatus } from '../../contracts/batches';

/** Row indexes are padded to this many digits so that ids sort in file order. */
const ROW_DIGITS = 6;

/** `<batch_id>:<row index, zero-padded>`: a contact is read by id, and a batch's contacts sort in file order. */
export function batchContactId(batchId: string, row: number): string {
  return `${batchId}:${String(row).padStart(ROW_DIGITS, '0')}`;
}

/** The range of ids of a batch's contacts (`:` < `;`). */
export function batchContactIdRange(batchId: string): { $gte: string; $lt: string } {
  return { $gte: `${batchId}:`, $lt: `${batchId};` };
}

/**
 * One accepted row of a batch's CSV. Written by the batch workflow after creation: status,
 * attempts, the latest call and when the next attempt is due.
 */
const batchContactSchema = new Schema(
  {
    _id: { type: String, required: true },
    batch_id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    /** 0-based among the accepted contacts (file order). */
    index: { type: Number, required: true },
    /** 1-based line of the CSV file it came from (the header is line 1). */
    row: { type: Number, required: true },
    number: { type: String, required: true },
    user_data: { type: Schema.Types.Mixed, default: () => ({}) },
    status: { type: String, enum: CONTACT_STATUSES, required: true },
    attempts: { type: Number, default: 0 },
    latest_call_id: { type: String, default: null },
    next_attempt_at: { type: Date, default: null },
    updated_at: { type: Date, required: true },
  },
  { collection: 'batch_contacts', versionKey: false, minimize: false },
);
batchContactSchema.index({ batch_id: 1, index: 1 });

export type BatchContactDocument = InferSchemaType<typeof batchContactSchema> & { _id: string; status: ContactStatus };
export const BatchContact = model('BatchContact', batchContactSchema);
