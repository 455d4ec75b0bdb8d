import { randomBytes } from 'node:crypto';
import { newId } from '../../db/ids';
import { ApiKey } from '../../db/models/api-key';
import { Membership } from '../../db/models/membership';
import { Workspace } from '../../db/models/workspace';
import { claimNumber } from '../../domain/numbers/phone-numbers';
import { appendLedgerItem } from '../../domain/billing/ledger';
import { issueOAuthToken } from '../../api/auth/oauth-tokens';
import { API_KEY_PREFIX, hashSecretToken, newSecretToken, shownPrefix } from '../../api/auth/secret-tokens';
import type { Role } from '../../domain/accounts/permissions';
import { jsonBody, type RunningApi } from './api';

export interface SignedUp {
  token: string;
  email: string;
  password: string;
  userId: string;
  workspaceId: string;
  /** `Authorization: Bearer <session token>`. */
  auth: Record<string, string>;
}

/** A unique address per call, so tests never collide on the unique email index. */
export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(6).toString('hex')}@example.com`;
}

/** Signs up through the real endpoint. */
export async function signUp(api: RunningApi, fields: { name?: string; email?: string; password?: string; workspace_name?: string } = {}): Promise<SignedUp> {
  const email = fields.email ?? uniqueEmail();
  const password = fields.password ?? 'correct horse battery';
  const res = await api.request(
    '/api/v1/auth/signup',
    jsonBody({ name: fields.name ?? 'Asha Rao', email, password, ...(fields.workspace_name ? { workspace_name: fields.workspace_name } : {}) }),
  );
  if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`);
  const body = await res.json();
  return { token: body.token, email, password, userId: body.user.id, workspaceId: body.workspace.id, auth: { Authorization: `Bearer ${body.token}` } };
}

/**
 * Arranges an active workspace without going through KYC, for tests about something else.
 * (The KYC tests activate workspaces the real way: submission, workflow, staff signal.)
 */
export async function activateWorkspace(workspaceId: string): Promise<void> {
  // India's calling hours (on for new workspaces, 0207) off: the tests' calls must not depend on the time of day; the tests of those hours turn them on.
  await Workspace.updateOne({ _id: workspaceId }, { $set: { status: 'active', activated_at: new Date(), 'compliance.india_calling_hours': false } });
}

/** Signs up and activates: a workspace ready for everything. */
export async function activeOwner(api: RunningApi, fields: Parameters<typeof signUp>[1] = {}): Promise<SignedUp> {
  const owner = await signUp(api, fields);
  await activateWorkspace(owner.workspaceId);
  return owner;
}

/**
 * Gives the workspace caller numbers, as a claim through POST /phone-numbers would (the phone
 * number tests cover that path): calls are placed only from numbers the workspace holds. A
 * number another workspace holds fails (NumberTakenError), as a claim would.
 */
export async function holdNumbers(workspaceId: string, ...numbers: string[]): Promise<void> {
  for (const number of numbers) {
    await claimNumber(workspaceId, { number, by: 'test', at: new Date(), lookUp: async () => ({ region: 'Bengaluru', numberType: 'local' }) });
  }
}

export function withJson(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/**
 * Adds a signed-up person to a workspace with a role, as an accepted invite would (the
 * invite tests cover that path); answers headers that act in that workspace.
 */
export async function memberWithRole(api: RunningApi, workspaceId: string, role: Role): Promise<SignedUp & { headers: Record<string, string> }> {
  const person = await signUp(api, { name: `${role} person` });
  await Membership.create({ _id: newId(), workspace_id: workspaceId, user_id: person.userId, role, joined_at: new Date() });
  return { ...person, headers: { ...person.auth, 'X-Workspace-ID': workspaceId } };
}

/** An API key of the workspace, stored as POST /keys stores one (hash only). */
export async function apiKeyFor(
  workspaceId: string,
  name = 'test key',
  rateLimitPerMinute?: number,
): Promise<{ id: string; key: string; headers: Record<string, string> }> {
  const key = newSecretToken(API_KEY_PREFIX);
  const id = newId();
  await ApiKey.create({
    _id: id,
    workspace_id: workspaceId,
    name,
    prefix: shownPrefix(key),
    key_hash: hashSecretToken(key),
    created_by: { user_id: null, name: 'test' },
    created_at: new Date(),
    ...(rateLimitPerMinute ? { rate_limit_per_minute: rateLimitPerMinute } : {}),
  });
  return { id, key, headers: { 'X-API-Key': key } };
}

/** An access token of a connected app acting for a member, from the real token store. */
export async function oauthTokenFor(
  workspaceId: string,
  userId: string,
  ttlSeconds = 3600,
): Promise<{ id: string; token: string; headers: Record<string, string> }> {
  const { id, token } = await issueOAuthToken({ workspaceId, userId, clientId: 'test-client', clientName: 'Test App', ttlSeconds });
  return { id, token, headers: { Authorization: `Bearer ${token}` } };
}

/**
 * An active Scale workspace stored directly, for load tests and benchmarks: `creditsPaise` of
 * credits (a `grant`), a concurrency limit, a key no rate limit will refuse, and a caller number.
 */
export async function fundedWorkspace(options: {
  concurrencyLimit: number;
  creditsPaise: number;
  callerNumber: string;
  name?: string;
}): Promise<{ workspaceId: string; key: string }> {
  const workspaceId = newId();
  const now = new Date();
  await Workspace.create({
    _id: workspaceId,
    name: options.name ?? 'load',
    status: 'active',
    plan: 'scale',
    concurrency_limit: options.concurrencyLimit,
    created_by: newId(),
    created_at: now,
    updated_at: now,
  });
  await appendLedgerItem({
    workspaceId,
    kind: 'grant',
    amountPaise: options.creditsPaise,
    idempotencyKey: `grant:${workspaceId}`,
    at: now,
    note: 'load test credits',
  });
  const { key } = await apiKeyFor(workspaceId, options.name ?? 'load', 1_000_000);
  await holdNumbers(workspaceId, options.callerNumber);
  return { workspaceId, key };
}
