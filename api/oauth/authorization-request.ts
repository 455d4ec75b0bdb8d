import type { OAuthClientDocument } from '../../db/models/oauth-client';
import { findClient } from './clients';
import { isS256Challenge } from './pkce';
import { resourcesOf } from './urls';

/** A checked authorization request (RFC 6749 section 4.1.1 with PKCE and RFC 8707 `resource`). */
export interface AuthorizationRequest {
  client: OAuthClientDocument & { _id: string };
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
  /** Passed through to the next step unchanged; no scopes are defined (see metadata.ts). */
  scope: string | undefined;
}

/**
 * Why a request cannot go on. Until the client and its redirect URI are known good the
 * error is shown to the member (`page`): redirecting to an unchecked URI would make us an
 * open redirector (RFC 6749 section 4.1.2.1). After that it goes back to the client.
 */
export type AuthorizationProblem =
  | { kind: 'page'; message: string }
  | {
      kind: 'redirect';
      redirectUri: string;
      state: string | undefined;
      error: 'invalid_request' | 'unsupported_response_type' | 'invalid_target';
      description: string;
    };

/** The OAuth parameters the consent page carries from step to step. */
export const AUTHORIZATION_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'scope',
] as const;

function one(params: Record<string, unknown>, name: string): string | undefined | null {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' ? value : null; // null: repeated
}

export async function checkAuthorizationRequest(params: Record<string, unknown>, base: string): Promise<AuthorizationRequest | AuthorizationProblem> {
  const clientId = one(params, 'client_id');
  if (!clientId) return { kind: 'page', message: 'The request names no client (client_id), or names it more than once.' };
  const client = await findClient(clientId);
  if (!client) return { kind: 'page', message: 'The app asking for access is not registered here (unknown client_id).' };
  const redirectUri = one(params, 'redirect_uri');
  if (!redirectUri) return { kind: 'page', message: 'The request has no redirect_uri, or has it more than once.' };
  // Exact match (OAuth 2.1 section 4.1.1): the URI must be one the client registered.
  if (!client.redirect_uris.includes(redirectUri)) return { kind: 'page', message: 'The redirect_uri is not one this app registered.' };

  const state = one(params, 'state');
  const fail = (error: 'invalid_request' | 'unsupported_response_type' | 'invalid_target', description: string): AuthorizationProblem => ({
    kind: 'redirect',
    redirectUri,
    state: state ?? undefined,
    error,
    description,
  });
  if (state === null) return fail('invalid_request', 'state must be given once');
  const responseType = one(params, 'response_type');
  if (responseType !== 'code') return fail('unsupported_response_type', 'response_type must be "code"');

  const challenge = one(params, 'code_challenge');
  if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE with S256)');
  const method = one(params, 'code_challenge_method');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256; plain (or none, which means plain) is not accepted');
  if (!isS256Challenge(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters)');

  const requested = one(params, 'resource');
  const resources = resourcesOf(base);
  if (requested === null) return fail('invalid_target', 'resource must be given once');
  const resource = requested === undefined ? resources.mcp : normalizedResource(requested, resources);
  if (!resource) return fail('invalid_target', `resource must be ${resources.mcp} (the MCP server) or ${resources.service}`);

  const scope = one(params, 'scope');
  if (scope === null) return fail('invalid_request', 'scope must be given once');
  return { client, redirectUri, state, codeChallenge: challenge, resource, scope };
}

/** The resource as stored, when it names this service: trailing slashes are not significant. */
export function normalizedResource(requested: string, resources: { service: string; mcp: string }): string | null {
  const trimmed = requested.replace(/\/+$/, '');
  return trimmed === resources.service || trimmed === resources.mcp ? trimmed : null;
}

export function isProblem(value: AuthorizationRequest | AuthorizationProblem): value is AuthorizationProblem {
  return 'kind' in value;
}

/** The client's redirect URI with the response parameters added (query response mode). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
