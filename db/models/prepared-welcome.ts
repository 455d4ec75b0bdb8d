import { Schema, model } from 'mongoose';

/**
 * A call's welcome synthesized while its phone rang (docs/decisions/0228): the audio (mu-law,
 * 8 kHz) of a welcome with the call's own `{variables}`, for the media node that takes the
 * call's stream. Taken (and deleted) when the stream arrives; otherwise deleted within minutes
 * (domain/calls/prepared-welcome.ts). It speaks the callee's values: it is never kept longer.
 * A welcome the same for every call is stored here too, once, by id `shared:<key hash>`
 * (docs/decisions/0233): only the agent's own words, read by every media node that does not
 * hold it yet, deleted likewise once no call has been dialled with it for minutes.
 */
const preparedWelcomeSchema = new Schema(
  {
    /** The call's id; `shared:<key hash>` for a welcome the same for every call. */
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    /** What it says and in which voice, hashed (agent, version, voice, the filled-in text): played only if the node would say the same. */
    key_hash: { type: String, required: true },
    audio: { type: Buffer, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'prepared_welcomes', versionKey: false },
);
preparedWelcomeSchema.index({ created_at: 1 });

export const PreparedWelcome = model('PreparedWelcome', preparedWelcomeSchema);
