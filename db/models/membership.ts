import { Schema, model, type InferSchemaType } from 'mongoose';
import { ROLES } from '../../contracts/roles';

/** A user's role in a workspace; one per pair (unique index). */
const membershipSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    user_id: { type: String, required: true },
    role: { type: String, enum: ROLES, required: true },
    joined_at: { type: Date, required: true },
  },
  { collection: 'memberships', versionKey: false },
);
membershipSchema.index({ workspace_id: 1, user_id: 1 }, { unique: true });
membershipSchema.index({ user_id: 1, joined_at: 1 });

export type MembershipDocument = InferSchemaType<typeof membershipSchema>;
export const Membership = model('Membership', membershipSchema);
