import { createHmac } from 'node:crypto';
import { parse as parseQueryString } from 'node:querystring';

/**
 * Plivo's side of signature V3, written from Plivo's documentation ("Validation",
 * docs.plivo.com/docs/voice/xml/request/validation) and the algorithm its SDKs check
 * (plivo-node `validateV3Signature` in `dist/utils/v3Security.js`): Plivo signs every request
 * it makes to a URL it was given, with the account's auth token, and sends the signature and
 * a fresh nonce in two headers. The service's verifier is a separate implementation
 * (providers/telephony/callbacks.ts); test/conformance holds both to the SDK.
 */

export const SIGNATURE_HEADER = 'X-Plivo-Signature-V3';
export const NONCE_HEADER = 'X-Plivo-Signature-V3-Nonce';

/** The fields of a form-encoded request Plivo makes. */
export type PlivoFields = Record<string, string>;

/**
 * The base64 HMAC-SHA256 of: the URL rebuilt without query (scheme://host[:port]path); for a
 * POST `?`, the query's decoded `name=value` pairs sorted, `.` between them and the form
 * fields, the form fields as `namevalue` sorted (the `?` only when there is a query or a
 * field); for a GET, the query and the fields as one sorted query; then `.` and the nonce.
 */
export function plivoSignature(authToken: string, method: 'GET' | 'POST', url: string, fields: PlivoFields, nonce: string): string {
  return createHmac('sha256', authToken)
    .update(`${signedUrl(method, url, fields)}.${nonce}`, 'utf8')
    .digest('base64');
}

function signedUrl(method: 'GET' | 'POST', url: string, fields: PlivoFields): string {
  const parts = /^(?:([^:/?#]+):)?(?:\/\/(?:[^@/?#]*@)?([^/?#]*))?([^?#]*)(?:\?([^#]*))?/.exec(url)!;
  const [, scheme = 'http', authority = '', path = '', query = ''] = parts;
  const base = `${scheme}://${authority}${path}`;
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(parseQueryString(query))) {
    for (const one of Array.isArray(value) ? value : [value ?? '']) pairs.push([name, one]);
  }
  if (method === 'GET') {
    for (const [name, value] of Object.entries(fields)) pairs.push([name, value]);
    const queryText = sortedPairs(pairs)
      .map(([n, v]) => `${n}=${v}`)
      .join('&');
    return queryText === '' ? base : `${base}?${queryText}`;
  }
  const queryText = sortedPairs(pairs)
    .map(([n, v]) => `${n}=${v}`)
    .join('&');
  const formText = sortedPairs(Object.entries(fields))
    .map(([n, v]) => `${n}${v}`)
    .join('');
  const hasFields = Object.keys(fields).length > 0;
  if (queryText === '' && !hasFields) return base;
  return `${base}?${queryText}${queryText !== '' && hasFields ? '.' : ''}${formText}`;
}

/** By name, then by value (code unit order, as the SDK's sort). */
function sortedPairs(pairs: [string, string][]): [string, string][] {
  return [...pairs].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
}
