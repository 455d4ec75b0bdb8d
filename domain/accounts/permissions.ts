/**
 * Roles and permissions exactly as the contract's table "Permissions by role". Each endpoint
 * asks for one permission (`x-access.permission` in schemas/openapi.yaml); nothing else in
 * the code decides who may do what.
 */
import type { Role } from '../../contracts/roles';

export { ROLES, type Role } from '../../contracts/roles';

export const PERMISSIONS = [
  'agents.view',
  'calls.view',
  'logs.view',
  'members.view',
  'agents.edit',
  'calls.place',
  'keys.manage',
  'billing.view',
  'audit.view',
  'numbers.manage',
  'members.manage',
  'billing.manage',
  'kyc.manage',
  'calls.erase',
  'workspace.close',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const VIEWER: readonly Permission[] = ['agents.view', 'calls.view', 'logs.view', 'members.view'];
const DEVELOPER: readonly Permission[] = [...VIEWER, 'agents.edit', 'calls.place', 'keys.manage'];
// `calls.erase` (erasing a call or everything about a person, docs/decisions/0208) and
// `workspace.close` (0210) are ours, beyond the contract's table: erasure cannot be undone, so
// only those who answer for the workspace's data hold it, never a key.
const ADMIN: readonly Permission[] = [...DEVELOPER, 'billing.view', 'audit.view', 'numbers.manage', 'members.manage', 'calls.erase'];
const OWNER: readonly Permission[] = [...ADMIN, 'billing.manage', 'kyc.manage', 'workspace.close'];

export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  viewer: new Set(VIEWER),
  developer: new Set(DEVELOPER),
  admin: new Set(ADMIN),
  owner: new Set(OWNER),
};

/** A key acts as a developer and can also read the balance and billing. */
export const API_KEY_PERMISSIONS: ReadonlySet<Permission> = new Set([...DEVELOPER, 'billing.view']);

/** A connected app acts as its user, limited to what a key may do. */
export function oauthPermissions(role: Role): ReadonlySet<Permission> {
  return new Set([...ROLE_PERMISSIONS[role]].filter((p) => API_KEY_PERMISSIONS.has(p)));
}
