import { Schema, model } from 'mongoose';

/**
 * One entry of a call's timeline (`GET /calls/{id}/events`), and the event its webhooks
 * carry. `_id` is the event id (`evt_...`), derived from the call and the entry's sequence,
 * so a retried `recordEvent` inserts nothing twice.
 */
const callEventSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    call_id: { type: String, required: true },
    agent_id: { type: String, default: '' },
    sequence: { type: Number, required: true },
    type: { type: String, required: true },
    message: { type: String, default: '' },
    level: { type: String, enum: ['info', 'warning', 'error'], required: true },
    latency_ms: { type: Number, default: null },
    /** The type's extra fields, as JSON text (their keys are the caller's, e.g. user_data). */
    data_json: { type: String, default: '{}' },
    created_at: { type: Date, required: true },
  },
  { collection: 'call_events', versionKey: false },
);
callEventSchema.index({ call_id: 1, sequence: 1 }, { unique: true });
callEventSchema.index({ workspace_id: 1, created_at: -1 });

export const CallEvent = model('CallEvent', callEventSchema);
