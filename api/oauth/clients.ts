import { randomBytes } from 'node:crypto';
import { OAuthClient, type OAuthClientDocument } from '../../db/models/oauth-client';
import { OAuthError } from './errors';

const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAX_REDIRECT_URIS = 10;
const MAX_TEXT = 200;
const MAX_URI = 2000;

/** Why a redirect URI cannot be registered, or null: https, or http on a loopback address (OAuth 2.1 section 2.3.1). */
export function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (uri.length > MAX_URI) return `is longer than ${MAX_URI} characters`;
  if (url.hash || uri.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return 'must use https, or http on a loopback address (localhost, 127.0.0.1, [::1])';
}

function optionalText(body: Record<string, unknown>, name: string, max = MAX_TEXT): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > max) throw new OAuthError('invalid_client_metadata', `${name} must be a string of at most ${max} characters`);
  return value;
}

function optionalUri(body: Record<string, unknown>, name: string): string | null {
  const value = optionalText(body, name, MAX_URI);
  if (value === null) return null;
  if (!/^https?:\/\//.test(value) || !URL.canParse(value)) throw new OAuthError('invalid_client_metadata', `${name} must be an http(s) URL`);
  return value;
}

/**
 * Dynamic client registration (RFC 7591) of a public client. Metadata we do not use is
 * ignored (section 2); metadata we cannot honour (a client secret, another grant) is refused.
 */
export async function registerClient(raw: unknown, now: Date) {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
  const body = raw as Record<string, unknown>;

  const redirectUris = body.redirect_uris;
  if (
    !Array.isArray(redirectUris) ||
    redirectUris.length === 0 ||
    redirectUris.length > MAX_REDIRECT_URIS ||
    !redirectUris.every((u) => typeof u === 'string')
  ) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must be a list of 1 to ${MAX_REDIRECT_URIS} URLs`);
  }
  for (const uri of redirectUris as string[]) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}`);
  }

  const authMethod = body.token_endpoint_auth_method ?? 'none';
  if (authMethod !== 'none')
    throw new OAuthError('invalid_client_metadata', 'only public clients are supported: token_endpoint_auth_method must be "none" (use PKCE)');

  const grantTypes = body.grant_types ?? [...GRANT_TYPES];
  if (!Array.isArray(grantTypes) || !grantTypes.includes('authorization_code') || !grantTypes.every((g) => (GRANT_TYPES as readonly unknown[]).includes(g))) {
    throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code and may add refresh_token; nothing else is supported');
  }
  const responseTypes = body.response_types ?? ['code'];
  if (!Array.isArray(responseTypes) || responseTypes.length !== 1 || responseTypes[0] !== 'code') {
    throw new OAuthError('invalid_client_metadata', 'response_types must be ["code"]');
  }

  const client = {
    _id: randomBytes(16).toString('hex'),
    client_name: optionalText(body, 'client_name')?.trim() || 'Unnamed app',
    redirect_uris: [...new Set(redirectUris as string[])],
    grant_types: grantTypes as string[],
    client_uri: optionalUri(body, 'client_uri'),
    logo_uri: optionalUri(body, 'logo_uri'),
    software_id: optionalText(body, 'software_id'),
    software_version: optionalText(body, 'software_version'),
    created_at: now,
  };
  await OAuthClient.create(client);
  return clientInformation(client);
}

/** The registration response (RFC 7591 section 3.2.1): the stored metadata and the client id. */
function clientInformation(client: OAuthClientDocument & { _id: string }) {
  return {
    client_id: client._id,
    client_id_issued_at: Math.floor(client.created_at.getTime() / 1000),
    client_name: client.client_name,
    redirect_uris: client.redirect_uris,
    grant_types: client.grant_types,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(client.client_uri ? { client_uri: client.client_uri } : {}),
    ...(client.logo_uri ? { logo_uri: client.logo_uri } : {}),
    ...(client.software_id ? { software_id: client.software_id } : {}),
    ...(client.software_version ? { software_version: client.software_version } : {}),
  };
}

export async function findClient(clientId: string): Promise<(OAuthClientDocument & { _id: string }) | null> {
  if (!/^[0-9a-f]{32}$/.test(clientId)) return null;
  return OAuthClient.findById(clientId).lean<OAuthClientDocument & { _id: string }>();
}
