/**
 * Where a logged request came in: a source is the surface the caller used, read from the
 * request's base path. A workspace's logs hold `api` and `console` requests; provider callbacks
 * (`telephony`) carry no workspace credential and are kept for operators only.
 */
export const LOG_SOURCES = [
  { id: 'api', name: 'Public API', description: 'Requests to the versioned API under /api/v1 (integrations with API keys, connected apps, scripts).' },
  { id: 'console', name: 'Console', description: 'Requests to the unversioned /api paths the web console uses.' },
] as const;

export type LogSource = (typeof LOG_SOURCES)[number]['id'] | 'telephony';

export interface SourcedPath {
  source: LogSource;
  /** The path relative to the API base, as the contract writes paths. */
  path: string;
}

/** The source and the base-relative path of a request path, or null outside the API. */
export function sourceOf(fullPath: string): SourcedPath | null {
  for (const [base, source] of [
    ['/api/v1', 'api'],
    ['/api', 'console'],
  ] as const) {
    if (fullPath !== base && !fullPath.startsWith(`${base}/`)) continue;
    const path = fullPath.slice(base.length) || '/';
    return { source: path.startsWith('/telephony/') ? 'telephony' : source, path };
  }
  return null;
}
