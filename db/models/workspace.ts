import { Schema, model, type InferSchemaType } from 'mongoose';
import { DEFAULT_PLAN } from '../../contracts/plans';

export const WORKSPACE_STATUSES = ['onboarding', 'active'] as const;
export type WorkspaceStatus = (typeof WORKSPACE_STATUSES)[number];

/** A tenant: everything else belongs to one. New workspaces are onboarding until KYC is approved. */
const workspaceSchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    status: { type: String, enum: WORKSPACE_STATUSES, required: true },
    plan: { type: String, required: true, default: DEFAULT_PLAN },
    /** Concurrent calls set by staff; null: the plan's. */
    concurrency_limit: { type: Number, default: null },
    created_by: { type: String, required: true },
    activated_at: { type: Date, default: null },
    /**
     * Rules the workspace keeps beyond its agents' settings. `india_calling_hours` (docs/decisions/0207):
     * outbound calls to +91 numbers only 09:00-21:00 IST. Set on for workspaces created since;
     * no default here, so workspaces created before read as off (absent).
     */
    compliance: { india_calling_hours: { type: Boolean } },
    /** How long callers' data is kept, in days (docs/decisions/0215); null: for ever, as before. */
    retention: { recordings_days: { type: Number, default: null }, transcripts_days: { type: Number, default: null } },
    /**
     * The owner's closing of the workspace (docs/decisions/0210), absent when never closed or
     * cancelled: `scheduled` during the grace period (cancellable; new calls and batches
     * refused), `erasing` once its workflow has begun (no longer cancellable), `erased` after.
     */
    closure: {
      type: new Schema(
        {
          id: { type: String, required: true },
          status: { type: String, enum: ['scheduled', 'erasing', 'erased'], required: true },
          requested_at: { type: Date, required: true },
          requested_by: { user_id: { type: String, default: null }, name: { type: String, default: null } },
          erase_at: { type: Date, required: true },
          erased_at: { type: Date, default: null },
        },
        { _id: false },
      ),
      default: null,
    },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'workspaces', versionKey: false },
);

export type WorkspaceDocument = InferSchemaType<typeof workspaceSchema>;
export const Workspace = model('Workspace', workspaceSchema);
