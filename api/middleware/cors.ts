import type { RequestHandler } from 'express';

/** What browsers may send to the API beyond the CORS-safelisted headers. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-API-Key', 'X-Workspace-ID', 'X-Timezone', 'X-Request-ID'];
/** What a page may read from an answer beyond the safelisted headers. */
const EXPOSED_HEADERS = [
  'X-Request-ID',
  'X-Timezone',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'WWW-Authenticate',
  'Content-Disposition',
  'Link',
];
const ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export interface CorsOptions {
  /** The origins (`https://console.example.com`) whose pages may call the API (`CORS_ORIGINS`); empty: none. */
  origins: readonly string[];
  /** Whether a path is one of the API's operations (any method): only those answer a preflight. */
  isOperationPath: (path: string) => boolean;
}

/**
 * Cross-origin access to `/api` (decision 0171): off unless origins are configured, then for
 * exactly those. An allowed origin gets `Access-Control-Allow-Origin` naming it on every
 * answer, and a preflight (`OPTIONS` with `Access-Control-Request-Method`) for an operation's
 * path is answered 204 here. Any other origin, and any preflight for another path, gets no
 * CORS header and goes on to the access step (405 or 404), so the browser refuses the call.
 * No credentials mode: the API reads no cookies, callers send bearer tokens or keys.
 *
 * Mounted on the API's paths only: the OAuth server and its metadata answer any origin
 * themselves (api/routes/oauth.ts), as browser-based MCP clients need.
 */
export function apiCors(options: CorsOptions): RequestHandler {
  const allowed = new Set(options.origins);
  return (req, res, next) => {
    if (allowed.size === 0) return next();
    res.vary('Origin');
    const origin = req.get('Origin');
    if (!origin || !allowed.has(origin)) return next();
    res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED_HEADERS.join(', ') });
    const preflight = req.method === 'OPTIONS' && req.get('Access-Control-Request-Method') !== undefined;
    if (!preflight || !options.isOperationPath(req.baseUrl + req.path)) return next();
    res
      .set({
        'Access-Control-Allow-Methods': ALLOWED_METHODS.join(', '),
        'Access-Control-Allow-Headers': ALLOWED_HEADERS.join(', '),
        'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
      })
      .status(204)
      .end();
  };
}
