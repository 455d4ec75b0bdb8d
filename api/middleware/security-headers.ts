import type { RequestHandler } from 'express';

/** A year: browsers remember to use HTTPS only for this long after an answer over TLS. */
const HSTS_MAX_AGE_SECONDS = 365 * 24 * 3600;

/**
 * Headers on every answer of the app (decision 0171):
 * - `X-Content-Type-Options: nosniff`: a browser never reads a JSON answer, an uploaded
 *   document or an invoice as HTML or script;
 * - `Referrer-Policy: no-referrer`: links out of a page (the consent page, a download) carry
 *   no URL of ours, tokens in query strings included;
 * - `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`: an answer that is
 *   not a page loads nothing and is framed nowhere; the pages (api/oauth/consent-page.ts) set
 *   their own, as restrictive as they can be;
 * - `Strict-Transport-Security` when the request came over TLS: directly, or through a proxy
 *   the app trusts (`TRUST_PROXY`), whose `X-Forwarded-Proto` Express reads into `req.secure`.
 *   Never over plain HTTP, where a man in the middle could set it anyway.
 */
export function securityHeaders(): RequestHandler {
  return (req, res, next) => {
    res.set({
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    });
    if (req.secure) res.set('Strict-Transport-Security', `max-age=${HSTS_MAX_AGE_SECONDS}`);
    next();
  };
}
