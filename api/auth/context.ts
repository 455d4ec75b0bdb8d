import type { Response } from 'express';
import { actorFor, creatorFor, type Actor, type Caller, type Principal, type UserSummary, type WorkspaceAccess } from '../../domain/accounts/principal';

// The caller's identity lives in ./principal (shared with the domain); this module reads it off a request.
export type { Actor, Caller, Credential, Principal, UserSummary, WorkspaceAccess, WorkspaceSummary } from '../../domain/accounts/principal';
export { actorFor, creatorFor } from '../../domain/accounts/principal';

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('no principal: the route is missing its x-access rule');
  return principal;
}

export function workspaceAccessOf(res: Response): WorkspaceAccess {
  const access = res.locals.workspaceAccess as WorkspaceAccess | undefined;
  if (!access) throw new Error('no workspace: the route is missing its x-access rule');
  return access;
}

/** The signed-in user of a session-only route. */
export function sessionUserOf(res: Response): UserSummary & { sessionId: string } {
  const { credential, user } = principalOf(res);
  if (credential.kind !== 'session' || !user) throw new Error('not a session: the route must be session-only');
  return { ...user, sessionId: credential.sessionId };
}

export function callerOf(res: Response): Caller {
  return { principal: principalOf(res), access: workspaceAccessOf(res) };
}

export function actorOf(res: Response): Actor {
  return actorFor(res.locals.principal as Principal | undefined);
}

/** Who creates a record (an API key, a webhook endpoint): the person, or `key:<name>` for an API key. */
export function creatorOf(res: Response): { user_id: string | null; name: string } {
  return creatorFor(principalOf(res));
}
