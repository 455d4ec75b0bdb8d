import { expect } from 'chai';
import type { ApiResponse, RunningApi } from '../../support/api';

export type Headers = Record<string, string>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** GET with the query, expecting 200; answers the body. */
export async function getOk(api: RunningApi, path: string, headers: Headers) {
  const res = await api.request(path, { headers });
  expect(res.status, await res.clone().text()).to.equal(200);
  return res.json();
}

/** Asserts a 422 whose issue points at the query parameter. */
export async function expectQueryIssue(res: ApiResponse, field: string): Promise<void> {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).to.equal(422);
  expect(body.detail.map((issue: { loc: unknown[] }) => issue.loc.join('.'))).to.include(`query.${field}`);
}

/**
 * The server logs matching the query once `ready` holds: entries are written in batches
 * shortly after each response, so a test waits for them (at most a few seconds).
 */
export async function logsOnceWritten(
  api: RunningApi,
  query: string,
  headers: Headers,
  // Its items, not its total: the API counts and reads the page at once, so an entry written
  // between the two is counted and not yet on the page.
  ready: (body: { items: LogItem[]; total: number }) => boolean = (b) => b.items.length > 0,
) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const body = await getOk(api, `/api/v1/logs?${query}`, headers);
    if (ready(body) || Date.now() > deadline) return body as { items: LogItem[]; total: number };
    await sleep(100);
  }
}

export interface LogItem {
  id: string;
  at: string;
  source: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
  credential: { kind: string; id: string | null; prefix: string | null; name: string | null };
}
