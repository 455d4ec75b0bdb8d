import { Schema, model, type InferSchemaType } from 'mongoose';
import { ROLES } from '../../contracts/roles';

export const INVITE_STATUSES = ['pending', 'accepted', 'revoked'] as const;

/** An invitation to join a workspace. The link's token is shown once; only its SHA-256 is kept. */
const inviteSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    email: { type: String, required: true },
    role: { type: String, enum: ROLES, required: true },
    token_hash: { type: String, required: true },
    status: { type: String, enum: INVITE_STATUSES, required: true },
    invited_by: { user_id: { type: String, required: true }, name: { type: String, required: true } },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    accepted_at: { type: Date, default: null },
    accepted_by: { type: String, default: null },
  },
  { collection: 'invites', versionKey: false },
);
inviteSchema.index({ token_hash: 1 }, { unique: true });
inviteSchema.index({ workspace_id: 1, created_at: -1 });

export type InviteDocument = InferSchemaType<typeof inviteSchema>;
export const Invite = model('Invite', inviteSchema);
