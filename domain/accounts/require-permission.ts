import type { Principal, WorkspaceAccess } from './principal';
import type { Permission } from './permissions';
import { HttpError } from '../shared/http-error';

/**
 * 403 naming the permission when the caller lacks it. Routes call it for a second permission
 * that only some requests need (changing an agent's phone number needs `numbers.manage`).
 */
export function requirePermission(permission: Permission, principal: Principal, access: WorkspaceAccess, action: string): void {
  if (access.permissions.has(permission)) return;
  const who =
    principal.credential.kind === 'api_key'
      ? 'an API key'
      : principal.credential.kind === 'oauth'
        ? `a connected app (acting as ${access.role})`
        : `the role ${access.role}`;
  throw new HttpError(403, `${who} cannot ${action}: it needs the permission ${permission}`, { permission });
}
