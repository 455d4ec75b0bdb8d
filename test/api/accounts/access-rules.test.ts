import { expect } from 'chai';
import { openApiDocument } from '../../../api/openapi-document';
import { OperationIndex, type IndexedOperation } from '../../../api/operation-index';
import { API_KEY_PERMISSIONS, oauthPermissions, ROLE_PERMISSIONS, type Permission, type Role } from '../../../domain/accounts/permissions';
import { jsonBody, startApi, type ApiResponse, type RunningApi } from '../../support/api';
import { activateWorkspace, apiKeyFor, memberWithRole, oauthTokenFor, signUp, type SignedUp } from '../../support/accounts';

/**
 * Every operation of the OpenAPI document against every kind of caller, driven by the
 * operations' own `x-access` rules: as later issues add endpoints, they are covered here
 * without a new line. Access is decided before the body and path are validated, so a made-up
 * id and an empty body reach the access decision of any operation; an allowed caller then
 * gets a 2xx, 404, 409 or 422, never a 401 or 403.
 */
const operations = new OperationIndex(openApiDocument() as never).all();
const guarded = operations.filter((op) => op.access.credentials !== 'public');

type Caller = {
  label: string;
  headers: Record<string, string>;
  kind: 'session' | 'api_key' | 'oauth';
  permissions: ReadonlySet<Permission>;
  /** A new session of the same person, for operations that end the session they run in. */
  freshHeaders?: () => Promise<Record<string, string>>;
};

/** Operations that end the caller's own session when allowed: each gets a session of its own. */
const ENDS_THE_SESSION = new Set(['logout']);

function pathFor(op: IndexedOperation): string {
  return '/api/v1' + op.path.replace(/\{[^}]+\}/g, '0123456789abcdef0123456789abcdef');
}

async function call(api: RunningApi, op: IndexedOperation, headers: Record<string, string>): Promise<ApiResponse> {
  const hasBody = ['POST', 'PUT', 'PATCH'].includes(op.method);
  return api.request(pathFor(op), {
    method: op.method,
    headers: hasBody ? { ...headers, 'Content-Type': 'application/json' } : headers,
    body: hasBody ? '{}' : undefined,
  });
}

describe('access rules of every operation', () => {
  let api: RunningApi;
  let owner: SignedUp;
  const callers: Caller[] = [];

  before(async function () {
    this.timeout(120_000);
    // A worker, so that operations starting workflows (the round-trip probe) finish quickly.
    api = await startApi({ workers: ['ops'] });
    owner = await signUp(api);
    await activateWorkspace(owner.workspaceId);
    const roles: Role[] = ['owner', 'admin', 'developer', 'viewer'];
    for (const role of roles) {
      const member = role === 'owner' ? { ...owner, headers: owner.auth } : await memberWithRole(api, owner.workspaceId, role);
      const freshHeaders = async () => {
        const res = await api.request('/api/v1/auth/login', jsonBody({ email: member.email, password: member.password }));
        return { Authorization: `Bearer ${(await res.json()).token}`, 'X-Workspace-ID': owner.workspaceId };
      };
      callers.push({ label: `${role} session`, headers: member.headers, kind: 'session', permissions: ROLE_PERMISSIONS[role], freshHeaders });
      const app = await oauthTokenFor(owner.workspaceId, member.userId);
      callers.push({ label: `app connected by a ${role}`, headers: app.headers, kind: 'oauth', permissions: oauthPermissions(role) });
    }
    // The matrix sends hundreds of keyed requests; the limit itself is tested elsewhere.
    const key = await apiKeyFor(owner.workspaceId, 'matrix', 100_000);
    callers.push({ label: 'API key', headers: key.headers, kind: 'api_key', permissions: API_KEY_PERMISSIONS });
  });
  after(() => api.close());

  it('covers operations of the document', () => expect(guarded.length).to.be.greaterThan(10));

  for (const op of guarded) {
    describe(`${op.method} ${op.path} (${op.access.permission ?? 'no permission'}${op.access.credentials === 'session' ? ', session only' : ''})`, () => {
      it('answers 401 with WWW-Authenticate: Bearer without credentials and with a wrong key', async () => {
        for (const headers of [
          {},
          { 'X-API-Key': 'vak_wrong' },
          { Authorization: 'Bearer vao_wrong' },
          { Authorization: 'Bearer wrong.session.token' },
        ] as Record<string, string>[]) {
          const res = await call(api, op, headers);
          expect(res.status, JSON.stringify(headers)).to.equal(401);
          expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
        }
      });

      it('lets in exactly the callers the table allows', async () => {
        for (const caller of callers) {
          const headers = ENDS_THE_SESSION.has(op.operationId) && caller.freshHeaders ? await caller.freshHeaders() : caller.headers;
          const res = await call(api, op, headers);
          const body = await res.json().catch(() => ({}));
          const sessionOnlyDenied = op.access.credentials === 'session' && caller.kind !== 'session';
          const permissionDenied = op.access.permission !== null && !caller.permissions.has(op.access.permission);
          if (sessionOnlyDenied) {
            expect(res.status, caller.label).to.equal(403);
            expect(body.detail, caller.label).to.match(/signed-in user session/);
          } else if (permissionDenied) {
            expect(res.status, caller.label).to.equal(403);
            expect(body.detail, caller.label).to.include(op.access.permission);
            expect(body.permission, caller.label).to.equal(op.access.permission);
          } else {
            expect([401, 403, 500], `${caller.label}: ${res.status} ${JSON.stringify(body)}`).not.to.include(res.status);
          }
        }
      });
    });
  }

  describe('the onboarding gate', () => {
    let newcomer: SignedUp;
    beforeEach(async () => (newcomer = await signUp(api)));

    for (const op of guarded.filter((o) => o.access.workspace)) {
      const gated = !op.access.onboarding;
      it(`${op.method} ${op.path} ${gated ? 'answers 403 workspace_inactive' : 'works'} while onboarding`, async () => {
        const res = await call(api, op, newcomer.auth);
        const body = await res.json().catch(() => ({}));
        if (gated) {
          expect(res.status).to.equal(403);
          expect(body).to.deep.equal({ detail: 'workspace not active', code: 'workspace_inactive' });
        } else {
          expect(body.code).not.to.equal('workspace_inactive');
          expect([401, 403, 500]).not.to.include(res.status);
        }
      });
    }

    it('lets keys and connected apps through once the workspace is active, not before', async () => {
      const fresh = await signUp(api);
      const key = await apiKeyFor(fresh.workspaceId);
      const gatedOp = guarded.find((o) => o.access.workspace && !o.access.onboarding && o.access.credentials === 'any' && o.method === 'GET');
      expect(gatedOp, 'a gated GET operation open to keys').to.exist;
      expect((await call(api, gatedOp!, key.headers)).status).to.equal(403);
      await activateWorkspace(fresh.workspaceId);
      expect([401, 403]).not.to.include((await call(api, gatedOp!, key.headers)).status);
    });
  });
});
