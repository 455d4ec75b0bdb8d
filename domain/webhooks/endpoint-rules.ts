import { ALL_EVENTS, SUBSCRIBABLE_EVENT_TYPES } from './event-types';
import type { ValidationIssue } from '../shared/validation-issues';

/** Plain `http` is for local development only: these exact hosts, as written. */
const PLAIN_HTTP_HOSTS = ['localhost', '127.0.0.1'];

/** `scheme://authority` at the start of a URL, as written (before the URL parser normalises it). */
const SCHEME_AND_AUTHORITY = /^([a-z][a-z0-9+.-]*):\/\/([^/?#\\]*)/i;

/**
 * Why a webhook URL is refused, or null when it is accepted. The length (at most 500) is the
 * OpenAPI schema's job. The host is compared as written (letter case aside), so
 * `http://127.1` (which the URL parser reads as 127.0.0.1) or `http://localhost.` stay
 * refused: the exception for plain http is exactly `localhost` and `127.0.0.1`.
 */
export function webhookUrlProblem(url: string): string | null {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\s\u0000-\u001f\u007f]/.test(url)) return 'must not contain spaces or control characters';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL such as https://example.com/webhooks';
  }
  const scheme = parsed.protocol.slice(0, -1);
  if (scheme !== 'https' && scheme !== 'http') return `must use https (it uses ${scheme})`;
  // The parser also takes `https:example.com` or `https:\\example.com`; only the plain form is accepted.
  const written = SCHEME_AND_AUTHORITY.exec(url);
  if (!written) return 'must be written as https://host/path';
  const authority = written[2];
  // Deliveries never send URL credentials, and the URL is shown to every developer of the
  // workspace: receivers authenticate a delivery by its signature instead.
  if (authority.includes('@')) return 'must not contain credentials (user:password@); check the X-Service-Signature header instead';
  const host = hostOf(authority).toLowerCase();
  if (host === '') return 'must name a host';
  if (scheme === 'http' && !PLAIN_HTTP_HOSTS.includes(host)) {
    return `must use https; plain http is allowed only for ${PLAIN_HTTP_HOSTS.join(' and ')}`;
  }
  return null;
}

/** The host of an authority without userinfo: `[::1]:8080` -> `[::1]`, `example.com:443` -> `example.com`. */
function hostOf(authority: string): string {
  if (authority.startsWith('[')) return authority.slice(0, authority.indexOf(']') + 1);
  const colon = authority.indexOf(':');
  return colon === -1 ? authority : authority.slice(0, colon);
}

/** Event types that are neither `*` nor subscribable, with their positions in the list. */
export function unknownEventTypes(events: readonly string[]): { index: number; type: string }[] {
  return events.flatMap((type, index) => (type === ALL_EVENTS || SUBSCRIBABLE_EVENT_TYPES.includes(type) ? [] : [{ index, type }]));
}

/** What is stored and shown: duplicates removed, `["*"]` when `*` is there, otherwise sorted. */
export function normalisedEvents(events: readonly string[]): string[] {
  if (events.includes(ALL_EVENTS)) return [ALL_EVENTS];
  return [...new Set(events)].sort();
}

/** The fields of a create or change body that these rules read. */
export interface EndpointFields {
  url?: string;
  events?: readonly string[];
}

/**
 * The rules of an endpoint's fields that the OpenAPI schema cannot state, as 422 issues at
 * their body locations. Fields left out (a change that does not send them) are not checked.
 */
export function endpointIssues({ url, events }: EndpointFields): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (url !== undefined) {
    const problem = webhookUrlProblem(url);
    if (problem) issues.push({ type: 'value_error', loc: ['body', 'url'], msg: `url ${problem}`, input: url });
  }
  for (const { index, type } of unknownEventTypes(events ?? [])) {
    issues.push({
      type: 'enum', // not one of the allowed values, which the code holds rather than the document
      loc: ['body', 'events', index],
      msg: `unknown event type "${type}"; use "*" for every event or a type from GET /webhooks/events`,
      input: type,
    });
  }
  return issues;
}
