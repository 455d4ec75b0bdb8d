import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { ApiResponse, RunningApi } from '../../support/api';
import type { SignedUp } from '../../support/accounts';

/**
 * Drives the OAuth flow over HTTP the way an MCP client and a member's browser do: the
 * client registers and sends the member to /oauth/authorize; the member's browser submits
 * the consent page's own forms (hidden fields read from the HTML). Nothing is stubbed.
 */

export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

export interface RegisteredClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
}

export async function registerApp(api: RunningApi, metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const res = await api.request('/oauth/register', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test Assistant', redirect_uris: [REDIRECT_URI], ...metadata }),
  });
  expect(res.status, await res.clone().text()).to.equal(201);
  return res.json();
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The authorization URL an MCP client builds (PKCE S256 unless the test overrides it). */
export function authorizationUrl(api: RunningApi, client: RegisteredClient, challenge: string, extra: Record<string, string | undefined> = {}): string {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0],
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'state-' + randomBytes(4).toString('hex'),
    resource: `${api.baseUrl}/mcp`,
    ...extra,
  };
  const url = new URL('/oauth/authorize', api.baseUrl);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

const unescape = (v: string) =>
  v
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The hidden fields of the page's form: what the browser would post back. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]] = unescape(m[2]);
  return fields;
}

export function workspaceOptions(html: string): string[] {
  return [...html.matchAll(/<option value="([0-9a-f]{32})">/g)].map((m) => m[1]);
}

export function postForm(api: RunningApi, path: string, fields: Record<string, string>): Promise<ApiResponse> {
  return api.request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

/**
 * The member's side: opens the authorization URL, posts their session token, picks the
 * workspace and answers. Returns the URL the browser is sent back to.
 */
export async function consent(
  api: RunningApi,
  url: string,
  member: SignedUp,
  options: { workspaceId?: string; decision?: 'approve' | 'deny' } = {},
): Promise<URL> {
  const first = await fetch(url, { redirect: 'manual' });
  expect(first.status, 'the consent page').to.equal(200);
  expect(first.headers.get('content-type')).to.match(/^text\/html/);
  const firstPage = await first.text();
  expect(firstPage).to.include('name="session_token"');

  const second = await postForm(api, '/oauth/authorize', { ...hiddenFields(firstPage), session_token: member.token });
  const picker = await second.text();
  expect(second.status, picker).to.equal(200);
  const workspaces = workspaceOptions(picker);
  const workspaceId = options.workspaceId ?? member.workspaceId;
  expect(workspaces).to.include(workspaceId);

  const third = await postForm(api, '/oauth/authorize', { ...hiddenFields(picker), workspace_id: workspaceId, decision: options.decision ?? 'approve' });
  expect(third.status, await third.clone().text()).to.equal(303);
  return new URL(third.headers.get('location') as string);
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
}

export function tokenRequest(api: RunningApi, fields: Record<string, string>): Promise<ApiResponse> {
  return postForm(api, '/oauth/token', fields);
}

/** Registration, consent and exchange in one: a connected app's tokens. */
export async function connectApp(api: RunningApi, member: SignedUp, workspaceId = member.workspaceId): Promise<{ client: RegisteredClient; tokens: Tokens }> {
  const client = await registerApp(api);
  const { verifier, challenge } = pkcePair();
  const back = await consent(api, authorizationUrl(api, client, challenge), member, { workspaceId });
  const code = back.searchParams.get('code') as string;
  const res = await tokenRequest(api, {
    grant_type: 'authorization_code',
    client_id: client.client_id,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
  });
  expect(res.status, await res.clone().text()).to.equal(200);
  return { client, tokens: await res.json() };
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
