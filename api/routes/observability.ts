import { Router } from 'express';
import { AuditEvent } from '../../db/models/audit-event';
import { Call } from '../../db/models/call';
import { ServerLog, type ServerLogDocument } from '../../db/models/server-log';
import type { operations } from '../../schemas/api-types';
import { workspaceAccessOf } from '../auth/context';
import { HttpError } from '../../domain/shared/http-error';
import {
  dailyStats,
  dayCount,
  isCalendarDay,
  daysBefore,
  daysBetween,
  dayInZone,
  MAX_STATS_DAYS,
  DEFAULT_STATS_DAYS,
  nextDay,
  startOfDayInZone,
  type CallFacts,
} from '../observability/daily-stats';
import { LOG_SOURCES } from '../observability/log-sources';
import { mastersOf } from '../observability/masters';
import { searchableKinds, searchKind, searchTerms, SEARCH_MIN_LENGTH, SEARCH_PER_KIND_DEFAULT, type SearchKind } from '../observability/search';
import { apiRouter } from './router';

type LogQuery = NonNullable<operations['listServerLogs']['parameters']['query']>;
type AuditQuery = NonNullable<operations['listAuditEvents']['parameters']['query']>;
type StatsQuery = NonNullable<operations['getDailyStats']['parameters']['query']>;
type SearchQuery = operations['search']['parameters']['query'];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `{$gte, $lt}` of an optional time range (`from` inclusive, `to` exclusive), or null. */
function timeRange(from: string | undefined, to: string | undefined): Record<string, Date> | null {
  if (!from && !to) return null;
  return { ...(from ? { $gte: new Date(from) } : {}), ...(to ? { $lt: new Date(to) } : {}) };
}

/** `404,5xx` as a filter on the status: exact codes, and classes as ranges. */
function statusFilter(list: string): Record<string, unknown> {
  const clauses = [...new Set(list.split(','))].map((item) =>
    item.endsWith('xx') ? { status: { $gte: Number(item[0]) * 100, $lt: Number(item[0]) * 100 + 100 } } : { status: Number(item) },
  );
  return clauses.length === 1 ? clauses[0] : { $or: clauses };
}

function logView(entry: ServerLogDocument) {
  const credential = entry.credential ?? { kind: 'none' };
  return {
    id: entry._id,
    at: entry.at,
    source: entry.source,
    method: entry.method,
    path: entry.path,
    status: entry.status,
    duration_ms: entry.duration_ms,
    request_id: entry.request_id,
    credential: { kind: credential.kind, id: credential.id ?? null, prefix: credential.prefix ?? null, name: credential.name ?? null },
  };
}

interface StoredAuditEvent {
  _id: string;
  at: Date;
  action: string;
  actor: { type: string; id?: string | null; name?: string | null };
  target: { type: string; id?: string | null; name?: string | null };
  ip?: string | null;
  details?: Record<string, unknown> | null;
}

function auditView(event: StoredAuditEvent) {
  return {
    id: event._id,
    at: event.at,
    action: event.action,
    actor: { type: event.actor.type, id: event.actor.id ?? null, name: event.actor.name ?? null },
    target: { type: event.target.type, id: event.target.id ?? null, name: event.target.name ?? null },
    ip: event.ip ?? null,
    details: event.details ?? {},
  };
}

/** `key.created,invite.*`: exact actions, and groups as prefixes. */
function actionFilter(list: string): Record<string, unknown> {
  const items = [...new Set(list.split(','))];
  const exact = items.filter((item) => !item.endsWith('.*'));
  const groups = items.filter((item) => item.endsWith('.*')).map((item) => ({ action: new RegExp(`^${escapeRegExp(item.slice(0, -1))}`) }));
  const clauses = [...(exact.length ? [{ action: { $in: exact } }] : []), ...groups];
  return clauses.length === 1 ? clauses[0] : { $or: clauses };
}

const queryIssue = (field: string, msg: string, input: unknown) => new HttpError(422, [{ type: 'value_error', loc: ['query', field], msg, input }]);

/**
 * Observability and lookups: server logs and their sources, the audit log, the dashboard's
 * daily numbers, search across the workspace, and the console's lists (masters). Everything
 * read is scoped by the caller's workspace.
 */
export function observabilityRoutes({ now }: { now: () => Date }): Router {
  const router = apiRouter();

  router.get('/logs', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const query = req.query as unknown as LogQuery;
    const filter: Record<string, unknown> = { workspace_id: workspace.id };
    const and: Record<string, unknown>[] = [];
    if (query.status) and.push(statusFilter(query.status));
    if (query.method) filter.method = query.method;
    if (query.path) filter.path = new RegExp(`^${escapeRegExp(query.path)}`);
    if (query.credential_kind) filter['credential.kind'] = query.credential_kind;
    if (query.credential_id) filter['credential.id'] = query.credential_id;
    if (query.request_id) filter.request_id = query.request_id;
    if (query.source) filter.source = query.source;
    const at = timeRange(query.from, query.to);
    if (at) filter.at = at;
    if (and.length) filter.$and = and;
    const [items, total] = await Promise.all([
      ServerLog.find(filter)
        .sort({ at: -1, _id: -1 })
        .skip(query.skip ?? 0)
        .limit(query.limit ?? 100)
        .lean<ServerLogDocument[]>(),
      ServerLog.countDocuments(filter),
    ]);
    res.json({ items: items.map(logView), total });
  });

  router.get('/logs/sources', (_req, res) => {
    res.json(LOG_SOURCES.map((source) => ({ ...source })));
  });

  router.get('/audit-events', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const query = req.query as unknown as AuditQuery;
    const filter: Record<string, unknown> = { workspace_id: workspace.id };
    if (query.actor) filter['actor.id'] = query.actor;
    if (query.actor_type) filter['actor.type'] = query.actor_type;
    if (query.action) filter.$and = [actionFilter(query.action)];
    const at = timeRange(query.from, query.to);
    if (at) filter.at = at;
    const [items, total] = await Promise.all([
      AuditEvent.find(filter)
        .sort({ at: -1, _id: -1 })
        .skip(query.skip ?? 0)
        .limit(query.limit ?? 50)
        .lean<StoredAuditEvent[]>(),
      AuditEvent.countDocuments(filter),
    ]);
    res.json({ items: items.map(auditView), total });
  });

  router.get('/stats/daily', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const query = req.query as unknown as StatsQuery;
    const zone = res.locals.timezone as string;
    for (const field of ['from', 'to'] as const) {
      const day = query[field];
      if (day !== undefined && !isCalendarDay(day)) throw queryIssue(field, 'not a day of the calendar', day);
    }
    // Without a range, the last week up to today; with only `from`, a week from it.
    const last = query.to ?? (query.from ? daysBefore(query.from, -(DEFAULT_STATS_DAYS - 1)) : dayInZone(now(), zone));
    const from = query.from ?? daysBefore(last, DEFAULT_STATS_DAYS - 1);
    const count = dayCount(from, last);
    if (count < 1) throw queryIssue('to', 'to is before from', last);
    if (count > MAX_STATS_DAYS) throw queryIssue('to', `at most ${MAX_STATS_DAYS} days at a time; this range has ${count}`, last);
    const days = daysBetween(from, last);
    const filter: Record<string, unknown> = {
      workspace_id: workspace.id,
      created_at: { $gte: startOfDayInZone(from, zone), $lt: startOfDayInZone(nextDay(last), zone) },
    };
    if (query.agent_id) filter.agent_id = query.agent_id;
    const calls = await Call.find(filter, {
      created_at: 1,
      started_at: 1,
      duration_seconds: 1,
      cost_paise: 1,
      avg_first_audio_ms: 1,
      voice_to_voice_ms: 1,
    }).lean<CallFacts[]>();
    res.json({ timezone: zone, from, to: last, ...dailyStats(calls, days, zone) });
  });

  router.get('/search', async (req, res) => {
    const { workspace, permissions } = workspaceAccessOf(res);
    const query = req.query as unknown as SearchQuery;
    const q = query.q.trim();
    if (q.length < SEARCH_MIN_LENGTH) throw queryIssue('q', `at least ${SEARCH_MIN_LENGTH} characters besides blanks`, query.q);
    const kinds = searchableKinds(query.kinds?.split(',') as SearchKind[] | undefined, permissions);
    const terms = searchTerms(q);
    const cap = query.limit ?? SEARCH_PER_KIND_DEFAULT;
    const found = await Promise.all(kinds.map(async (kind) => [kind, await searchKind(kind, workspace.id, terms, cap)] as const));
    res.json({ q, kinds, ...Object.fromEntries(found) });
  });

  router.get('/masters', (_req, res) => {
    res.json(mastersOf(now()));
  });

  return router;
}
