import type { Permission, Role } from './permissions';
import type { WorkspaceStatus } from '../../db/models/workspace';

/** Who is calling: one of the three credentials of the contract. */
export type Credential =
  | { kind: 'session'; sessionId: string }
  | { kind: 'api_key'; keyId: string; name: string; workspaceId: string }
  | { kind: 'oauth'; tokenId: string; clientName: string; workspaceId: string };

export interface UserSummary {
  id: string;
  name: string;
  email: string;
}

export interface Principal {
  credential: Credential;
  /** The person behind a session or a connected app; null for an API key. */
  user: UserSummary | null;
}

export interface WorkspaceSummary {
  id: string;
  name: string;
  status: WorkspaceStatus;
  plan: string;
}

export interface WorkspaceAccess {
  workspace: WorkspaceSummary;
  /** The member's role; null for an API key (which has its own fixed permissions). */
  role: Role | null;
  permissions: ReadonlySet<Permission>;
}

/** The audit record's view of the caller. */
export interface Actor {
  type: 'user' | 'api_key' | 'oauth_app' | 'anonymous';
  id: string | null;
  name: string | null;
}

/**
 * Who acts and in which workspace: what the HTTP routes read from `res.locals`, and what the
 * MCP server (api/mcp) hands to the same functions.
 */
export interface Caller {
  principal: Principal;
  access: WorkspaceAccess;
}

export function actorFor(principal: Principal | undefined): Actor {
  if (!principal) return { type: 'anonymous', id: null, name: null };
  const { credential, user } = principal;
  if (credential.kind === 'api_key') return { type: 'api_key', id: credential.keyId, name: `key:${credential.name}` };
  if (credential.kind === 'oauth') return { type: 'oauth_app', id: user?.id ?? null, name: `${user?.name ?? 'unknown'} via ${credential.clientName}` };
  return { type: 'user', id: user?.id ?? null, name: user?.name ?? null };
}

/** Who creates a record (an API key, a webhook endpoint): the person, or `key:<name>` for an API key. */
export function creatorFor({ credential, user }: Principal): { user_id: string | null; name: string } {
  if (credential.kind === 'api_key') return { user_id: null, name: `key:${credential.name}` };
  return { user_id: user?.id ?? null, name: user?.name ?? 'unknown' };
}
