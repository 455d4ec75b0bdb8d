import { Schema, model, type InferSchemaType } from 'mongoose';

export const LIMIT_REQUEST_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type LimitRequestStatus = (typeof LIMIT_REQUEST_STATUSES)[number];

/** The highest concurrency limit a workspace may ask for (contract, "Limits"). */
export const MAX_REQUESTED_LIMIT = 100;
export const MAX_LIMIT_REASON_LENGTH = 500;
export const MAX_DECISION_NOTE_LENGTH = 500;

const requesterSchema = new Schema(
  {
    user_id: { type: String, default: null },
    name: { type: String, required: true },
  },
  { _id: false },
);

/**
 * A workspace's request for another concurrency limit, decided by staff with
 * `npm run limits:approve|limits:reject`. Kept after the decision: the workspace lists its
 * history. `concurrency_limit` is the limit asked for; staff may approve another one, which
 * the decision note then states.
 */
const limitRequestSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    concurrency_limit: { type: Number, required: true },
    reason: { type: String, required: true },
    status: { type: String, enum: LIMIT_REQUEST_STATUSES, required: true },
    requested_by: { type: requesterSchema, required: true },
    created_at: { type: Date, required: true },
    decided_at: { type: Date, default: null },
    /** The staff member who decided. */
    decided_by: { type: String, default: null },
    decision_note: { type: String, default: null },
  },
  { collection: 'limit_requests', versionKey: false },
);
limitRequestSchema.index({ workspace_id: 1, created_at: -1 });

export type LimitRequestDocument = InferSchemaType<typeof limitRequestSchema> & { _id: string };
export const LimitRequest = model('LimitRequest', limitRequestSchema);

/**
 * The marker of a workspace's open request: one document per workspace (`_id` = workspace
 * id), inserted before the request and deleted once it is decided. "One open request at a
 * time" rests on the unique `_id` alone, because guarded updates are not atomic on FerretDB
 * and it has no reliable partial unique index.
 */
const openLimitRequestSchema = new Schema(
  {
    _id: { type: String, required: true },
    request_id: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'open_limit_requests', versionKey: false },
);

export const OpenLimitRequest = model('OpenLimitRequest', openLimitRequestSchema);
