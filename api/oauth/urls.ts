import type { Request } from 'express';

/** Where the MCP server (the protected resource apps connect to) is served. */
export const MCP_PATH = '/mcp';
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';

/**
 * The service's public origin (`https://api.example.com`): the OAuth issuer, and the base of
 * every URL the metadata names. It comes from the configured public API URL (PUBLIC_API_URL,
 * `/api/v1` removed) so that a forged Host header cannot change what clients are told; only
 * without one (tests of other things, local runs) is it the request's own origin.
 */
export function publicBaseOf(req: Request, publicApiUrl: string | undefined): string {
  if (publicApiUrl) return new URL(publicApiUrl).origin;
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/** The resource identifiers (RFC 8707) tokens may be asked for: the whole service, or its MCP endpoint. */
export function resourcesOf(base: string): { service: string; mcp: string } {
  return { service: base, mcp: base + MCP_PATH };
}

/**
 * The `WWW-Authenticate` value of a 401 from the MCP endpoint (MCP authorization spec,
 * RFC 9728 section 5.1): it points the client at the protected-resource metadata, where it
 * finds this authorization server.
 */
export function mcpAuthChallenge(req: Request, publicApiUrl: string | undefined, error?: 'invalid_token'): string {
  const metadataUrl = publicBaseOf(req, publicApiUrl) + PROTECTED_RESOURCE_METADATA_PATH + MCP_PATH;
  return `Bearer ${error ? `error="${error}", ` : ''}resource_metadata="${metadataUrl}"`;
}
