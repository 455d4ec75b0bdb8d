import { Schema, model } from 'mongoose';
import { CALL_STATUSES } from '../../contracts/call-statuses';

/**
 * The calls not yet ended, one small document each (`_id` = the call id) with the call's status
 * as its record has it: inserted with the record (a call placed, or a live call admitted),
 * its status written beside the record's, deleted when the call ends. The workspace's live and
 * queued calls (`GET /workspace/limits`, polled by dashboards) are counted here, not in
 * `calls`: FerretDB decodes every document of a collection for such a count, and `calls` holds
 * every call ever made, transcripts included (docs/decisions/0231). An entry left behind (a
 * workflow terminated by an operator) stops counting once older than any call can be open.
 */
const openCallSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    status: { type: String, enum: CALL_STATUSES, required: true },
    since: { type: Date, required: true },
  },
  { collection: 'open_calls', versionKey: false },
);
openCallSchema.index({ workspace_id: 1, status: 1 });

export const OpenCall = model('OpenCall', openCallSchema);
