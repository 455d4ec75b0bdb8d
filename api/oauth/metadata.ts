export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
} as const;

/** Protected-resource metadata (RFC 9728) of the service or of its MCP endpoint. */
export function protectedResourceMetadata(base: string, resource: string) {
  return {
    resource,
    authorization_servers: [base],
    bearer_methods_supported: ['header'],
    resource_name: 'Voice Agent Service',
    resource_documentation: `${base}/openapi.json`,
  };
}

/**
 * Authorization-server metadata (RFC 8414). Public clients only (`none`), the code flow with
 * PKCE S256 only, refresh tokens that rotate. No scopes: a token acts as the member who
 * connected the app, limited to what an API key may do, so there is nothing to narrow.
 */
export function authorizationServerMetadata(base: string) {
  return {
    issuer: base,
    authorization_endpoint: base + OAUTH_PATHS.authorize,
    token_endpoint: base + OAUTH_PATHS.token,
    registration_endpoint: base + OAUTH_PATHS.register,
    revocation_endpoint: base + OAUTH_PATHS.revoke,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  };
}
