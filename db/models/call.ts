import { Schema, model, type InferSchemaType } from 'mongoose';
import type { CallChannel } from '../../contracts/slots';

import { CALL_STATUSES, type CallStatus } from '../../contracts/call-statuses';

export { CALL_STATUSES, type CallStatus } from '../../contracts/call-statuses';
export const LIVE_CALL_STATUSES: readonly CallStatus[] = ['ringing', 'in-progress'];
export const FINAL_CALL_STATUSES: readonly CallStatus[] = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];

export const CALL_DIRECTIONS: readonly CallChannel[] = ['outbound', 'inbound', 'browser'];

const transcriptItemSchema = new Schema(
  {
    role: { type: String, enum: ['assistant', 'user'], required: true },
    text: { type: String, required: true },
    at: { type: Date, required: true },
    interrupted: { type: Boolean, default: false },
  },
  { _id: false },
);

/**
 * One call, from the queue to its final record. The call workflow (`call-<id>`) is its only
 * writer after creation; the API reads it. `event_seq` is not stored: event sequence numbers
 * are held by the workflow, so that a retried activity writes the same event again.
 */
const callSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    /** Empty (both) only for an inbound call to a number connected to no agent, refused at once. */
    agent_id: { type: String, default: '' },
    agent_name: { type: String, default: '' },
    direction: { type: String, enum: CALL_DIRECTIONS, required: true },
    /** E.164; empty for a browser call (no phone line: the agent's number, when it has one, as `to_number`). */
    to_number: { type: String, default: '' },
    from_number: { type: String, default: '' },
    status: { type: String, enum: CALL_STATUSES, required: true },
    user_data: { type: Schema.Types.Mixed, default: () => ({}) },
    /** Who placed it: a person's name or `key:<name>`. */
    placed_by: { type: String, default: '' },
    queued_at: { type: Date, default: null },
    dequeued_at: { type: Date, default: null },
    started_at: { type: Date, default: null },
    ended_at: { type: Date, default: null },
    duration_seconds: { type: Number, default: null },
    cost_paise: { type: Number, default: null },
    hangup_by: { type: String, default: null },
    hangup_reason: { type: String, default: null },
    /** The telephony provider's id and last status of this call. */
    provider_call_id: { type: String, default: null },
    provider_status: { type: String, default: null },
    /** When the call's one dial was claimed (docs/decisions/0162): a dial run again after a lost worker finds it and refuses. Never shown. */
    dial_requested_at: { type: Date, default: null },
    /**
     * The outcome of that dial, written by the dial itself (docs/decisions/0239): when the provider
     * accepted it (with `provider_call_id`), or why it was refused. A dial run again, its
     * workflow task retried, answers this outcome instead of refusing a call that is ringing.
     * Never shown.
     */
    dial_accepted_at: { type: Date, default: null },
    dial_refused_reason: { type: String, default: null },
    /**
     * The media node the API's answer sent the call's audio to (docs/decisions/0165): its public
     * WebSocket base and its own task queue, written by the first answer request so that a
     * repeated one sends the audio to the same node. Never shown.
     */
    media_node_url: { type: String, default: null },
    media_node_task_queue: { type: String, default: null },
    /**
     * When the provider's answer request came, written with the media node (docs/decisions/0235):
     * the call's workflow may hear of the answer after the API has answered it, and whoever tells
     * it later (the hang-up's status, the media node) tells it this time. Never shown.
     */
    answered_at: { type: Date, default: null },
    /** What is kept of the call (the agent's `call.data_storage` when the call was created, docs/decisions/0213). Never shown. */
    data_storage: { type: String, default: 'everything' },
    /** When the retention sweep erased the call's words (docs/decisions/0215); null: not erased. Never shown. */
    text_erased_at: { type: Date, default: null },
    transcript: { type: [transcriptItemSchema], default: [] },
    summary: { type: String, default: null },
    extracted: { type: Schema.Types.Mixed, default: null },
    /** Why post-call analytics gave up (after its retries); the call completed without them. */
    analytics_error: { type: String, default: null },
    avg_first_audio_ms: { type: Number, default: null },
    /** Each spoken turn's voice-to-voice time on the media node, in order (docs/decisions/0220); shown as p50 and p90. */
    voice_to_voice_ms: { type: [Number], default: undefined },
    /**
     * Who answered an outbound call whose agent detects voicemail (docs/decisions/0158): the
     * provider's machine-detection callback writes it once (`human` or `machine`), and the media
     * node writes `machine` when the transcript finds a greeting. Null otherwise.
     */
    answered_by: { type: String, enum: ['human', 'machine', null], default: null },
    /** Transfer to a person (docs/decisions/0160): who took the call; null when the agent did not transfer it. */
    transfer: {
      type: new Schema(
        {
          destination: { type: String, required: true },
          description: { type: String, default: '' },
          mode: { type: String, enum: ['cold', 'warm'], required: true },
          status: { type: String, enum: ['started', 'transferred', 'failed'], required: true },
          reason: { type: String, default: null },
          transferred_at: { type: Date, default: null },
          bridged_seconds: { type: Number, default: 0 },
        },
        { _id: false },
      ),
      default: null,
    },
    /**
     * When the call's personal data was erased (docs/decisions/0208): recording, transcript,
     * user_data, summary, extracted values, the caller's number, its events' texts and its
     * webhook deliveries' bodies. What billing and audit need stays. Null: not erased.
     */
    erased_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'calls', versionKey: false, minimize: false },
);
callSchema.index({ workspace_id: 1, created_at: -1 });
callSchema.index({ workspace_id: 1, status: 1 });

export type CallDocument = InferSchemaType<typeof callSchema> & { _id: string };
export const Call = model('Call', callSchema);
