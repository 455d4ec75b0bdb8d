import { PERMISSIONS, type Permission } from '../domain/accounts/permissions';

/**
 * Who may call an operation, declared next to it in schemas/openapi.yaml as `x-access`:
 * - `credentials`: `public` (none), `session` (a signed-in user; keys and apps get 403),
 *   or `any` (session, API key or connected app; the default);
 * - `workspace`: whether the operation acts inside a workspace (default: yes unless public);
 * - `permission`: the one permission it needs (none: any member);
 * - `onboarding`: whether it works while the workspace is still onboarding.
 */
export interface AccessRule {
  credentials: 'public' | 'session' | 'any';
  workspace: boolean;
  permission: Permission | null;
  onboarding: boolean;
}

export interface IndexedOperation {
  operationId: string;
  method: string;
  path: string;
  access: AccessRule;
  pattern: RegExp;
  /** One character per segment, `0` literal and `1` templated: the lower sorts first. */
  specificity: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

interface OperationObject {
  operationId?: string;
  'x-access'?: Partial<AccessRule>;
}

export function parseAccessRule(raw: Partial<AccessRule> | undefined, where: string): AccessRule {
  if (!raw) throw new Error(`${where} has no x-access rule`);
  const credentials = raw.credentials ?? 'any';
  if (!['public', 'session', 'any'].includes(credentials)) throw new Error(`${where}: x-access.credentials "${credentials}" is unknown`);
  const permission = raw.permission ?? null;
  if (permission !== null && !(PERMISSIONS as readonly string[]).includes(permission)) {
    throw new Error(`${where}: x-access.permission "${permission}" is not in the permission table`);
  }
  const workspace = raw.workspace ?? credentials !== 'public';
  if (permission && !workspace) throw new Error(`${where}: a permission needs a workspace`);
  return { credentials, workspace, permission, onboarding: raw.onboarding ?? false };
}

/** What the index makes of a request's method and path. */
export type Identified =
  | { kind: 'operation'; operation: IndexedOperation }
  /** The path is an operation's, the method is not one of its methods (`allow`, in document order). */
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'unknown' };

/**
 * A templated segment: one value, not a dot segment (`.` and `..` name the path they sit in,
 * RFC 3986 section 3.3), with no matrix parameter (`;`) and no percent-encoded slash or
 * backslash, which a router or proxy may read as a separator. No id of the service has any
 * of these; a value with one matches no operation (404) rather than one its path lacks (405).
 */
const TEMPLATED_SEGMENT = '(?!\\.\\.?(?:/|$))(?:[^/;%]|%(?!2[fF]|5[cC])[0-9A-Fa-f]{2})+';

/**
 * Finds the operation a request is for, so that authentication and authorisation run before
 * the body is parsed or validated (a caller without access learns nothing about the body
 * rules). Literal segments win over templated ones (`/account/sessions/revoke-others` over
 * `/account/sessions/{session_id}`), the left-most difference deciding, as in the validator's
 * own order (its `sortRoutes`), so that both pick the same operation.
 *
 * Only the canonical spelling of a path matches (decision 0170): letter case as documented,
 * no trailing slash, no empty or dot segments, no percent-encoded letters or slashes in the
 * literal segments. The Express routers and the validator are set to the same rules
 * (`apiRouter`, `case sensitive routing`, `strict routing`), so that nothing they serve was
 * not identified here first.
 */
export class OperationIndex {
  private readonly operations: IndexedOperation[] = [];

  constructor(document: { paths?: Record<string, Record<string, unknown>> }) {
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      const segments = path.split('/').filter(Boolean);
      const pattern = new RegExp(
        '^/' + segments.map((s) => (s.startsWith('{') ? TEMPLATED_SEGMENT : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '$',
      );
      const specificity = segments.map((s) => (s.startsWith('{') ? '1' : '0')).join('');
      for (const method of METHODS) {
        const operation = item[method] as OperationObject | undefined;
        if (!operation) continue;
        const where = `${method.toUpperCase()} ${path}`;
        this.operations.push({
          operationId: operation.operationId ?? where,
          method: method.toUpperCase(),
          path,
          access: parseAccessRule(operation['x-access'], where),
          pattern,
          specificity,
        });
      }
    }
    // Stable: the operations of one path keep the document's method order (the 405's Allow).
    this.operations.sort((a, b) => (a.specificity < b.specificity ? -1 : a.specificity > b.specificity ? 1 : 0));
  }

  /**
   * The operation of the path that matches best (literal before templated), if it has this
   * method. A method the best path lacks matches nothing, even when a templated path has it:
   * `DELETE /phone-numbers/available` is a 405 (with `Allow`), not
   * `DELETE /phone-numbers/{number}` with `number` = "available".
   */
  identify(method: string, path: string): Identified {
    const best = this.operations.find((op) => op.pattern.test(path));
    if (!best) return { kind: 'unknown' };
    const ofPath = this.operations.filter((op) => op.path === best.path);
    const operation = ofPath.find((op) => op.method === method);
    return operation ? { kind: 'operation', operation } : { kind: 'method_not_allowed', allow: ofPath.map((op) => op.method) };
  }

  all(): readonly IndexedOperation[] {
    return this.operations;
  }
}
