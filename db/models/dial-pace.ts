import { Schema, model } from 'mongoose';

/**
 * The telephony account's dial pace (docs/decisions/0166): the earliest time the next new call
 * may be dialled, shared by every worker node. One row per provider account (`_id`), moved
 * forward by compare-and-set, so that two nodes never take the same moment.
 */
const dialPaceSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** The next moment free to be given to a call (each call's workflow waits for its own). */
    next_at: { type: Date, required: true },
    /** When the last dial was sent: the next is sent no sooner than one interval after it. */
    last_sent_at: { type: Date, default: null },
  },
  { collection: 'dial_pace', versionKey: false },
);

export const DialPace = model('DialPace', dialPaceSchema);
