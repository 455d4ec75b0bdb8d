import type { Request, RequestHandler } from 'express';
import { Membership } from '../../db/models/membership';
import type { Principal, WorkspaceAccess } from '../auth/context';
import { authenticate, loadWorkspace, unauthorized, type AuthenticateDeps } from '../auth/credentials';
import { API_KEY_PERMISSIONS, oauthPermissions, ROLE_PERMISSIONS, type Role } from '../../domain/accounts/permissions';
import { HttpError } from '../../domain/shared/http-error';
import type { AccessRule, Identified, IndexedOperation, OperationIndex } from '../operation-index';
import { requirePermission } from '../../domain/accounts/require-permission';

const WORKSPACE_ID = /^[0-9a-f]{32}$/;

/**
 * Enforces each operation's `x-access` rule before its body is read: credentials (401),
 * session-only (403), the workspace (400/404), the permission (403 naming it), then the
 * onboarding gate (403 `workspace_inactive`).
 *
 * It fails closed (decision 0170): a request for the API (`isForTheApi`, under any spelling)
 * that is not an operation's canonical path is 404 here, and one for a method its path lacks
 * is 405 with `Allow`; neither is handed on. The identified operation is kept in
 * `res.locals.operation`, and the API's routers serve nothing else (`servesIdentifiedOnly`).
 */
export function access(index: OperationIndex, bases: readonly string[], deps: AuthenticateDeps): RequestHandler {
  return async (req, res, next) => {
    if (!isForTheApi(req.path)) return next();
    const identified = identifyUnder(index, bases, req.method, req.path);
    if (identified.kind === 'unknown') return next(new HttpError(404, `no route for ${req.method} ${req.path}`));
    if (identified.kind === 'method_not_allowed') {
      return next(new HttpError(405, `${req.method} method not allowed`, {}, { Allow: identified.allow.join(', ') }));
    }
    const operation = identified.operation;
    res.locals.operation = operation;
    if (operation.access.credentials === 'public') return next();
    try {
      const principal = await authenticate(req, res, deps);
      res.locals.principal = principal;
      checkWorkspaceHeader(req);
      checkCredentialKind(operation.access, principal);
      if (operation.access.workspace) {
        const workspaceAccess = await resolveWorkspace(req, principal);
        res.locals.workspaceAccess = workspaceAccess;
        authorizeInWorkspace(operation.access, principal, workspaceAccess);
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Whether a full path (`/api/v1/agents/x`) is an operation's path, whatever the method. */
export function isOperationPath(index: OperationIndex, bases: readonly string[], path: string): boolean {
  return identifyUnder(index, bases, 'GET', path).kind !== 'unknown';
}

/** The operation under the first base (longest first) whose path it is. */
function identifyUnder(index: OperationIndex, bases: readonly string[], method: string, path: string): Identified {
  for (const base of bases) {
    if (!path.startsWith(`${base}/`)) continue;
    const identified = index.identify(method, path.slice(base.length));
    if (identified.kind !== 'unknown') return identified;
  }
  return { kind: 'unknown' };
}

/**
 * Whether a path is meant for the API under some spelling a proxy or router might read as
 * `/api/...`, as sent or with its percent-escapes decoded: any letter case, backslashes as
 * slashes, empty, dot and dot-dot segments and matrix parameters resolved. Such a request is
 * the access step's to answer; only paths outside the API (the OAuth server, MCP, the
 * document) pass through.
 */
export function isForTheApi(path: string): boolean {
  return firstSegment(path) === 'api' || firstSegment(decodedPath(path)) === 'api';
}

function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path; // a malformed escape: read the path as it came
  }
}

/** The first segment once backslashes are slashes, case is folded, and empty, dot and dot-dot segments and matrix parameters are resolved. */
function firstSegment(path: string): string | undefined {
  const segments: string[] = [];
  for (const raw of path.replace(/\\/g, '/').toLowerCase().split('/')) {
    const segment = raw.split(';')[0];
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return segments[0];
}

/**
 * First in the API's routers: what they serve must be the operation the access step
 * identified, and the one the validator checked the request against. The routers and the
 * validator follow the same spelling rules as the index (decision 0170); a disagreement is a
 * defect, answered as a 500 rather than served.
 */
export function servesIdentifiedOnly(): RequestHandler {
  return (req, res, next) => {
    const operation = res.locals.operation as IndexedOperation | undefined;
    const validated = (req as Request & { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
    if (operation && validated === req.baseUrl + operation.path) return next();
    next(
      new Error(
        `the router reached ${req.method} ${req.originalUrl}, which the access step identified as ${operation ? `${operation.method} ${operation.path}` : 'nothing'} and the validator as ${validated ?? 'nothing'}`,
      ),
    );
  };
}

/**
 * The rule of an operation that acts in a workspace, once the workspace is known: the
 * credential kind, the permission, then the onboarding gate. The MCP server (api/mcp) runs
 * it for the operation each tool mirrors.
 */
export function authorizeInWorkspace(rule: AccessRule, principal: Principal, access: WorkspaceAccess): void {
  checkCredentialKind(rule, principal);
  checkPermission(rule, principal, access);
  checkWorkspaceActive(rule, access);
}

function checkCredentialKind(rule: AccessRule, principal: Principal): void {
  if (rule.credentials === 'session' && principal.credential.kind !== 'session') {
    const who = principal.credential.kind === 'api_key' ? 'API keys' : 'connected apps';
    throw new HttpError(403, `${who} cannot use this endpoint; it needs a signed-in user session`);
  }
}

/** The workspace a credential acts in, with its permissions there (a key's own, an app's user's, a session's chosen). */
export async function resolveWorkspace(req: Request, principal: Principal): Promise<WorkspaceAccess> {
  const { credential, user } = principal;
  if (credential.kind === 'api_key') {
    const workspace = await loadWorkspace(req, credential.workspaceId);
    if (!workspace) throw unauthorized('the API key belongs to a workspace that no longer exists', 'invalid_token');
    return { workspace, role: null, permissions: API_KEY_PERMISSIONS };
  }
  if (!user) throw new Error('a session or app credential without a user');
  if (credential.kind === 'oauth') {
    const [workspace, membership] = await Promise.all([
      loadWorkspace(req, credential.workspaceId),
      Membership.findOne({ workspace_id: credential.workspaceId, user_id: user.id }, { role: 1 }).lean(),
    ]);
    if (!workspace || !membership) throw unauthorized('the app was connected by someone no longer in its workspace', 'invalid_token');
    return { workspace, role: membership.role as Role, permissions: oauthPermissions(membership.role as Role) };
  }
  checkWorkspaceHeader(req);
  const chosen = req.get('X-Workspace-ID');
  const membership = chosen
    ? await Membership.findOne({ workspace_id: chosen, user_id: user.id }, { role: 1, workspace_id: 1 }).lean()
    : await Membership.findOne({ user_id: user.id }, { role: 1, workspace_id: 1 }).sort({ joined_at: 1, _id: 1 }).lean();
  if (!membership) {
    if (chosen) throw new HttpError(404, 'workspace not found');
    throw new HttpError(400, 'no workspace chosen: you are not a member of any workspace; accept an invite first');
  }
  const workspace = await loadWorkspace(req, membership.workspace_id);
  if (!workspace) throw new HttpError(404, 'workspace not found');
  const role = membership.role as Role;
  return { workspace, role, permissions: ROLE_PERMISSIONS[role] };
}

/**
 * A malformed `X-Workspace-ID` is 400 whoever sends it: keys and apps ignore the workspace it
 * names, but not a value the document's pattern refuses (the validator would call it a 422).
 */
function checkWorkspaceHeader(req: Request): void {
  const chosen = req.get('X-Workspace-ID');
  if (chosen !== undefined && !WORKSPACE_ID.test(chosen)) {
    throw new HttpError(400, 'X-Workspace-ID must be a workspace id (32 hexadecimal characters)');
  }
}

function checkPermission(rule: AccessRule, principal: Principal, access: WorkspaceAccess): void {
  if (rule.permission) requirePermission(rule.permission, principal, access, 'do this');
}

function checkWorkspaceActive(rule: AccessRule, access: WorkspaceAccess): void {
  if (access.workspace.status === 'active' || rule.onboarding) return;
  throw new HttpError(403, 'workspace not active', { code: 'workspace_inactive' });
}
