import { Schema, model } from 'mongoose';

/**
 * The outbound calls waiting in the queue, one small document each (`_id` = the call id):
 * inserted with the call record by `POST /calls`, deleted when the call leaves the queue
 * (dequeued for its dial, or ended while queued). A call's position is counted here, not in
 * `calls`: FerretDB decodes every document of a collection for such a count, and `calls`
 * holds every call ever made, transcripts included, while this holds only the waiting ones.
 * Inserts and deletes are by id, so retries change nothing; an entry left behind (a workflow
 * terminated by an operator) stops counting once it is older than the queue's 24 hours.
 */
const queuedCallSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    queued_at: { type: Date, required: true },
  },
  { collection: 'queued_calls', versionKey: false },
);

export const QueuedCall = model('QueuedCall', queuedCallSchema);
