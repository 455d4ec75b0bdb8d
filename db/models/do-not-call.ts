import { Schema, model, type InferSchemaType } from 'mongoose';

/** How a number came onto a workspace's do-not-call list (docs/decisions/0205). */
export const DO_NOT_CALL_SOURCES = ['manual', 'import', 'opt_out', 'api'] as const;
export type DoNotCallSource = (typeof DO_NOT_CALL_SOURCES)[number];

/** `<workspace_id>:<E.164 number>`: a number is listed once per workspace, and the check before a dial is one read by id. */
export function doNotCallId(workspaceId: string, number: string): string {
  return `${workspaceId}:${number}`;
}

/**
 * A number the workspace must not call (TRAI's commercial-communication rules: a person who
 * asked not to be called again). Checked when an outbound call is placed and again at the
 * front of the queue; inbound calls are not affected.
 */
const doNotCallSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    number: { type: String, required: true },
    reason: { type: String, default: '' },
    source: { type: String, enum: DO_NOT_CALL_SOURCES, required: true },
    /** A person's name, `key:<name>`, or for an opt-out the call it came from (`call:<id>`). */
    added_by: { type: String, required: true },
    /** The call in which the caller asked not to be called (source `opt_out`). */
    call_id: { type: String, default: null },
    created_at: { type: Date, required: true },
  },
  { collection: 'do_not_call', versionKey: false },
);
doNotCallSchema.index({ workspace_id: 1, created_at: -1, _id: -1 });

export type DoNotCallDocument = InferSchemaType<typeof doNotCallSchema> & { _id: string; source: DoNotCallSource };
export const DoNotCall = model('DoNotCall', doNotCallSchema);
