import { Schema, model } from 'mongoose';

/**
 * The media nodes that take calls' audio (docs/decisions/0165): each node writes its row when it
 * starts and every second after, and deletes it when it stops. The API reads the rows seen
 * lately to choose where an answered call's audio goes, without asking Temporal.
 */
const mediaNodeSchema = new Schema(
  {
    /** The node's id, new at each start. */
    _id: { type: String, required: true },
    /** Its public WebSocket base, given to the provider. */
    url: { type: String, required: true },
    /** Its own task queue, which only it polls. */
    task_queue: { type: String, required: true },
    /** Conversations it holds (live or waiting to be claimed). */
    live_calls: { type: Number, required: true, default: 0 },
    /** It is stopping: it finishes its calls and takes no new ones. */
    draining: { type: Boolean, required: true, default: false },
    started_at: { type: Date, required: true },
    seen_at: { type: Date, required: true },
  },
  { collection: 'media_nodes', versionKey: false },
);

export const MediaNode = model('MediaNode', mediaNodeSchema);
