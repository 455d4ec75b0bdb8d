import { DoNotCall, doNotCallId, type DoNotCallDocument, type DoNotCallSource } from '../../db/models/do-not-call';
import { parseContactsCsv, type RejectedRow } from '../batches/contacts-csv';
import { actorFor, creatorFor, type Caller } from '../accounts/principal';
import { recordWorkspaceAudit } from '../audit/audit-log';
import type { operations } from '../../schemas/api-types';

/**
 * The workspace's do-not-call list (docs/decisions/0205): numbers an outbound call is never
 * placed to, nor dialled at the front of the queue. Keyed by workspace and number, so adding
 * a listed number again changes nothing.
 */

export type NewDoNotCallBody = operations['addDoNotCall']['requestBody']['content']['application/json'];

export interface NewDoNotCallEntry {
  workspaceId: string;
  number: string;
  reason: string;
  source: DoNotCallSource;
  addedBy: string;
  callId?: string | null;
  at: Date;
}

/** Whether the workspace may not call `number`. */
export async function isOnDoNotCallList(workspaceId: string, number: string): Promise<boolean> {
  return (await DoNotCall.exists({ _id: doNotCallId(workspaceId, number) })) !== null;
}

/** Adds a number; `added` is false (and the entry the one already there) when it was listed before. */
export async function addToDoNotCallList(entry: NewDoNotCallEntry): Promise<{ entry: DoNotCallDocument; added: boolean }> {
  const _id = doNotCallId(entry.workspaceId, entry.number);
  const document = {
    _id,
    workspace_id: entry.workspaceId,
    number: entry.number,
    reason: entry.reason,
    source: entry.source,
    added_by: entry.addedBy,
    call_id: entry.callId ?? null,
    created_at: entry.at,
  };
  // An upsert that only inserts: two adds at once (a caller's opt-out and an import) leave one entry.
  const result = await DoNotCall.updateOne({ _id }, { $setOnInsert: document }, { upsert: true });
  const stored = await DoNotCall.findById(_id).lean<DoNotCallDocument>();
  if (!stored) throw new Error(`the do-not-call entry ${_id} vanished while it was added`);
  return { entry: stored, added: result.upsertedCount > 0 };
}

/**
 * POST /do-not-call and its MCP tool: `source` defaults to `manual` for a person and `api` for a
 * key or connected app; a number added (not one listed already) goes in the audit log.
 */
export async function addToDoNotCallAs(
  caller: Caller,
  body: NewDoNotCallBody,
  at: Date,
  ip: string | null = null,
): Promise<{ entry: ReturnType<typeof doNotCallView>; added: boolean }> {
  const workspaceId = caller.access.workspace.id;
  const source = body.source ?? (caller.principal.credential.kind === 'session' ? 'manual' : 'api');
  const { entry, added } = await addToDoNotCallList({
    workspaceId,
    number: body.number,
    reason: body.reason?.trim() ?? '',
    source,
    addedBy: creatorFor(caller.principal).name,
    at,
  });
  if (added) {
    await recordWorkspaceAudit(workspaceId, {
      action: 'do_not_call.added',
      actor: actorFor(caller.principal),
      target: { type: 'do_not_call', id: null, name: entry.number },
      at,
      ip,
      details: { source, reason: entry.reason },
    });
  }
  return { entry: doNotCallView(entry), added };
}

/** Removes a number; the entry removed, or null when it was not listed. */
export async function removeFromDoNotCallList(workspaceId: string, number: string): Promise<DoNotCallDocument | null> {
  return DoNotCall.findOneAndDelete({ _id: doNotCallId(workspaceId, number) }).lean<DoNotCallDocument>();
}

/** One page of the list, newest first, and the count of all. */
export async function doNotCallPage(
  workspaceId: string,
  page: { limit?: number; skip?: number },
): Promise<{ items: ReturnType<typeof doNotCallView>[]; total: number }> {
  const filter = { workspace_id: workspaceId };
  const [items, total] = await Promise.all([
    DoNotCall.find(filter)
      .sort({ created_at: -1, _id: -1 })
      .skip(page.skip ?? 0)
      .limit(page.limit ?? 50)
      .lean<DoNotCallDocument[]>(),
    DoNotCall.countDocuments(filter),
  ]);
  return { items: items.map(doNotCallView), total };
}

export function doNotCallView(entry: DoNotCallDocument) {
  return {
    number: entry.number,
    reason: entry.reason ?? '',
    source: entry.source,
    added_by: entry.added_by,
    call_id: entry.call_id ?? null,
    created_at: entry.created_at,
  };
}

/** The column of an import that holds each number's reason (any case); other columns are ignored. */
const REASON_COLUMN = 'reason';
/** Entries written at a time by an import. */
const IMPORT_CHUNK = 500;

export type DoNotCallImport =
  | { ok: true; added: number; already_listed: number; rejected_total: number; rejected_rows: RejectedRow[] }
  | { ok: false; reason: string; rejected_rows: RejectedRow[] };

/**
 * Imports a CSV as batches read theirs (domain/batches/contacts-csv.ts, decision 0079): a header
 * row, a number column (`number`, `phone_number`, `phone`, `mobile` or `to_number`, or the one
 * named), numbers in E.164 after separators are dropped, bad and repeated rows reported with
 * their file line; an optional `reason` column. Listed numbers stay as they were.
 */
export async function importDoNotCallCsv(
  content: Buffer | string,
  options: { workspaceId: string; numberColumn?: string; addedBy: string; at: Date; maxReported: number },
): Promise<DoNotCallImport> {
  const parsed = parseContactsCsv(content, options.numberColumn);
  if (!parsed.ok) return { ok: false, reason: parsed.reason, rejected_rows: [] };
  const rejectedRows = parsed.rejected.slice(0, options.maxReported);
  if (!parsed.contacts.length)
    return { ok: false, reason: 'no number to list: the file has no rows, or every row was rejected (see rejected_rows)', rejected_rows: rejectedRows };
  const reasonColumn = parsed.columns.find((column) => column.toLowerCase() === REASON_COLUMN);
  let added = 0;
  for (let start = 0; start < parsed.contacts.length; start += IMPORT_CHUNK) {
    const chunk = parsed.contacts.slice(start, start + IMPORT_CHUNK);
    const result = await DoNotCall.bulkWrite(
      chunk.map((contact) => {
        const _id = doNotCallId(options.workspaceId, contact.number);
        const reason = reasonColumn ? (contact.user_data[reasonColumn] ?? '') : '';
        const document = {
          _id,
          workspace_id: options.workspaceId,
          number: contact.number,
          reason,
          source: 'import',
          added_by: options.addedBy,
          call_id: null,
          created_at: options.at,
        };
        return { updateOne: { filter: { _id }, update: { $setOnInsert: document }, upsert: true } };
      }),
      { ordered: false },
    );
    added += result.upsertedCount;
  }
  return { ok: true, added, already_listed: parsed.contacts.length - added, rejected_total: parsed.rejected.length, rejected_rows: rejectedRows };
}

/** The whole list as CSV, newest first: a header, then one row per number (cells quoted where needed). */
export async function* doNotCallCsv(workspaceId: string): AsyncGenerator<string> {
  yield 'number,reason,source,added_by,created_at\r\n';
  const cursor = DoNotCall.find({ workspace_id: workspaceId }).sort({ created_at: -1, _id: -1 }).lean<DoNotCallDocument[]>().cursor();
  for await (const entry of cursor as AsyncIterable<DoNotCallDocument>) {
    yield [entry.number, entry.reason ?? '', entry.source, entry.added_by, new Date(entry.created_at).toISOString()].map(csvCell).join(',') + '\r\n';
  }
}

/**
 * A CSV cell: quoted when it holds a comma, quote or line break; and a leading `=`, `+`, `-`,
 * `@` in free text is prefixed with `'` so a spreadsheet opening the export runs no formula.
 * Numbers (E.164, leading `+`) are left as they are: they are the list's key.
 */
function csvCell(value: string, column: number): string {
  const text = column === 1 || column === 3 ? neutralised(value) : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function neutralised(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}
