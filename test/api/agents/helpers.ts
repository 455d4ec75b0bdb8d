import { Workspace } from '../../../db/models/workspace';
import { withJson } from '../../support/accounts';
import type { ApiResponse, RunningApi } from '../../support/api';

/** Requests of the Agents endpoints, acting with the given headers. */
export function agentsClient(api: RunningApi, headers: Record<string, string>) {
  const base = '/api/v1/agents';
  return {
    create: (body: unknown, h = headers): Promise<ApiResponse> => api.request(base, withJson('POST', body, h)),
    list: (h = headers): Promise<ApiResponse> => api.request(base, { headers: h }),
    get: (id: string, h = headers): Promise<ApiResponse> => api.request(`${base}/${id}`, { headers: h }),
    update: (id: string, body: unknown, h = headers): Promise<ApiResponse> => api.request(`${base}/${id}`, withJson('PUT', body, h)),
    remove: (id: string, h = headers): Promise<ApiResponse> => api.request(`${base}/${id}`, { method: 'DELETE', headers: h }),
    duplicate: (id: string, h = headers): Promise<ApiResponse> => api.request(`${base}/${id}/duplicate`, { method: 'POST', headers: h }),
    versions: (id: string, h = headers): Promise<ApiResponse> => api.request(`${base}/${id}/versions`, { headers: h }),
    version: (id: string, version: string | number, h = headers): Promise<ApiResponse> => api.request(`${base}/${id}/versions/${version}`, { headers: h }),
    restore: (id: string, version: string | number, h = headers): Promise<ApiResponse> =>
      api.request(`${base}/${id}/versions/${version}/restore`, { method: 'POST', headers: h }),
    /** Creates an agent and answers its body; fails the test unless 201. */
    async created(body: Record<string, unknown>, h = headers) {
      const res = await api.request(base, withJson('POST', body, h));
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
      return res.json();
    },
  };
}

export async function setPlan(workspaceId: string, plan: string): Promise<void> {
  await Workspace.updateOne({ _id: workspaceId }, { $set: { plan } });
}

/** The one 422 issue of a response (fails when there is not exactly one). */
export async function onlyIssue(res: ApiResponse): Promise<{ type: string; loc: (string | number)[]; msg: string; input: unknown }> {
  const body = await res.json();
  if (res.status !== 422 || !Array.isArray(body.detail) || body.detail.length !== 1)
    throw new Error(`expected one 422 issue, got ${res.status} ${JSON.stringify(body)}`);
  return body.detail[0];
}

export type Path = (string | number)[];

/** A copy of `base` with `value` at `path` (objects and arrays made on the way); `undefined` removes it. */
export function withSetting(base: Record<string, unknown>, path: Path, value: unknown): Record<string, unknown> {
  const copy = structuredClone(base);
  let node: Record<string | number, unknown> = copy;
  path.slice(0, -1).forEach((key, i) => {
    if (node[key] === undefined) node[key] = typeof path[i + 1] === 'number' ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  });
  const last = path[path.length - 1];
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

/** The value at `path` of a response body. */
export function valueAt(body: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], body);
}

/**
 * A rule at its boundary: `ok` values are accepted and stored as sent (or as `stored`), each
 * `bad` value is refused with one 422 issue of `type` at `["body", ...path]` (or `loc`).
 */
export interface BoundCase {
  title: string;
  path: Path;
  base?: Record<string, unknown>;
  ok: { value: unknown; stored?: unknown }[];
  bad: { value: unknown; type: string; loc?: Path }[];
}
