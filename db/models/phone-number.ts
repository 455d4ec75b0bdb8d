import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * A number of the provider account's pool held by one workspace, and the agent it is
 * connected to. This record is the truth about connections; `Agent.phone_number` is derived
 * from it (domain/numbers/phone-numbers.ts).
 */
const phoneNumberSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** E.164. Unique: a number belongs to at most one workspace. */
    number: { type: String, required: true },
    workspace_id: { type: String, required: true },
    agent_id: { type: String, default: null },
    /**
     * `agent_id` when connected, else `free:<_id>`: unique, so that an agent holds at most one
     * number even under concurrent connects (a unique index on a nullable `agent_id` would let
     * only one number be free).
     */
    connection_key: { type: String, required: true },
    /** The provider's description of the number when it was claimed. */
    region: { type: String, default: '' },
    number_type: { type: String, default: '' },
    claimed_at: { type: Date, required: true },
    claimed_by: { type: String, required: true },
    connected_at: { type: Date, default: null },
  },
  { collection: 'phone_numbers', versionKey: false },
);
phoneNumberSchema.index({ number: 1 }, { unique: true });
phoneNumberSchema.index({ connection_key: 1 }, { unique: true });
phoneNumberSchema.index({ workspace_id: 1, claimed_at: -1 });

export type PhoneNumberDocument = InferSchemaType<typeof phoneNumberSchema>;
export const PhoneNumber = model('PhoneNumber', phoneNumberSchema);

/** The `connection_key` of a number connected to no agent. */
export function freeConnectionKey(id: string): string {
  return `free:${id}`;
}
