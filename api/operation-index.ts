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
  literalSegments: number;
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

/**
 * Finds the operation a request is for, so that authentication and authorisation run before
 * the body is parsed or validated (a caller without access learns nothing about the body
 * rules). Literal segments win over templated ones (`/account/sessions/revoke-others` over
 * `/account/sessions/{session_id}`).
 */
export class OperationIndex {
  private readonly operations: IndexedOperation[] = [];

  constructor(document: { paths?: Record<string, Record<string, unknown>> }) {
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      const segments = path.split('/').filter(Boolean);
      const pattern = new RegExp(
        '^/' + segments.map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '/?$',
      );
      const literalSegments = segments.filter((s) => !s.startsWith('{')).length;
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
          literalSegments,
        });
      }
    }
    this.operations.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  /**
   * The operation of the path that matches best (most literal segments), if it has this
   * method. A method the best path lacks matches nothing, even when a templated path has it:
   * `DELETE /phone-numbers/available` is the validator's 405 (with `Allow`), not
   * `DELETE /phone-numbers/{number}` with `number` = "available".
   */
  match(method: string, path: string): IndexedOperation | undefined {
    const best = this.operations.find((op) => op.pattern.test(path));
    if (!best) return undefined;
    return this.operations.find((op) => op.path === best.path && op.method === method);
  }

  all(): readonly IndexedOperation[] {
    return this.operations;
  }
}
