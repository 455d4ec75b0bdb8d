import type { Role } from '../domain/accounts/permissions';
import { closureView, type ClosureFields } from '../domain/privacy/workspace-closure';

/**
 * How stored records look on the wire. One function per record, so every endpoint shows a
 * user or a workspace the same way.
 */
interface UserRecord {
  _id: string;
  name: string;
  email: string;
  two_factor?: { enabled?: boolean | null } | null;
  created_at: Date;
}

export function userView(user: UserRecord) {
  return {
    id: user._id,
    name: user.name,
    email: user.email,
    two_factor_enabled: Boolean(user.two_factor?.enabled),
    created_at: user.created_at,
  };
}

interface WorkspaceRecord {
  _id: string;
  name: string;
  status: string;
  plan: string;
  created_at: Date;
  activated_at?: Date | null;
  compliance?: { india_calling_hours?: boolean | null } | null;
  retention?: { recordings_days?: number | null; transcripts_days?: number | null } | null;
  closure?: ClosureFields | null;
}

export function workspaceView(workspace: WorkspaceRecord, role: Role | null) {
  return {
    id: workspace._id,
    name: workspace.name,
    status: workspace.status,
    plan: workspace.plan,
    role,
    created_at: workspace.created_at,
    activated_at: workspace.activated_at ?? null,
    // Workspaces created before the setting existed read as off (0207).
    compliance: { india_calling_hours: workspace.compliance?.india_calling_hours === true },
    // Unset: kept for ever, as before (0215).
    retention: { recordings_days: workspace.retention?.recordings_days ?? null, transcripts_days: workspace.retention?.transcripts_days ?? null },
    // Null unless the owner has closed it (docs/decisions/0210).
    closure: closureView(workspace.closure),
  };
}
