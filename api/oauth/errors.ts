import type { ErrorRequestHandler } from 'express';

/** The error codes of RFC 6749 section 5.2, RFC 7591 section 3.2.2 and RFC 8707. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata';

/** An OAuth error answered as `{error, error_description}` (not the API's `{detail}`). */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = code === 'invalid_client' ? 401 : 400,
  ) {
    super(description);
  }
}

export const oauthErrorHandler: ErrorRequestHandler = (err, _req, res, next) => {
  if (!(err instanceof OAuthError)) return next(err);
  res.status(err.status).set('Cache-Control', 'no-store').json({ error: err.code, error_description: err.description });
};

/**
 * One parameter of a form or JSON body: absent, or a single string. A repeated parameter
 * (a list after form parsing) is refused, as RFC 6749 section 3.1 requires.
 */
export function singleParam(source: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = source?.[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be given once, as a string`);
  return value;
}

export function requiredParam(source: Record<string, unknown> | undefined, name: string): string {
  const value = singleParam(source, name);
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}
