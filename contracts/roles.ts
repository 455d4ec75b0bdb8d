/**
 * The workspace roles, exactly as the contract's table "Permissions by role": stored on
 * memberships and invites (db/) and given permissions in domain/accounts/permissions.ts.
 */
export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
