import { type Request, type Response, type Router } from 'express';
import { apiRouter } from './router';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import {
  addToDoNotCallAs,
  doNotCallCsv,
  doNotCallPage,
  importDoNotCallCsv,
  removeFromDoNotCallList,
  type NewDoNotCallBody,
} from '../../domain/calls/do-not-call';
import { MAX_REPORTED_REJECTIONS } from '../../domain/batches/contacts-csv';
import { HttpError, validationFailed } from '../../domain/shared/http-error';
import type { operations } from '../../schemas/api-types';
import { actorOf, callerOf, creatorOf, workspaceAccessOf } from '../auth/context';
import { clientIp } from '../auth/sessions';

type ListQuery = NonNullable<operations['listDoNotCall']['parameters']['query']>;

/** What express-openapi-validator's multer leaves in `req.files` (memory storage). */
interface UploadedFile {
  fieldname: string;
  originalname: string;
  buffer: Buffer;
}

/** The E.164 rule of the document (`E164`), for the path's number (decoded from `%2B...`). */
const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * The workspace's do-not-call list (docs/decisions/0205): list, add, remove, import a CSV and
 * export it. Adding a listed number again answers the entry as it is (200, nothing written);
 * every change that lists or unlists numbers is in the audit log.
 */
export function doNotCallRoutes({ now }: { now: () => Date }): Router {
  const router = apiRouter();

  router.get('/do-not-call', async (req, res) => {
    res.json(await doNotCallPage(workspaceAccessOf(res).workspace.id, req.query as unknown as ListQuery));
  });

  router.get('/do-not-call/export', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    res.set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': 'attachment; filename="do-not-call.csv"',
      'Cache-Control': 'private, no-store',
    });
    for await (const chunk of doNotCallCsv(workspace.id)) res.write(chunk);
    res.end();
  });

  router.post('/do-not-call', async (req, res) => {
    const { entry, added } = await addToDoNotCallAs(callerOf(res), req.body as NewDoNotCallBody, now(), clientIp(req));
    res.status(added ? 201 : 200).json(entry);
  });

  router.post('/do-not-call/import', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const { content, fileName, numberColumn } = importedFile(req);
    const result = await importDoNotCallCsv(content, {
      workspaceId: workspace.id,
      numberColumn,
      addedBy: creatorOf(res).name,
      at: now(),
      maxReported: MAX_REPORTED_REJECTIONS,
    });
    if (!result.ok)
      throw new HttpError(422, [{ type: 'value_error', loc: ['body', 'file'], msg: result.reason, input: fileName }], { rejected_rows: result.rejected_rows });
    const { ok: _ok, ...summary } = result;
    await audit(req, res, 'do_not_call.imported', fileName, {
      added: summary.added,
      already_listed: summary.already_listed,
      rejected_total: summary.rejected_total,
    });
    res.json(summary);
  });

  router.delete('/do-not-call/:number', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const number = String(req.params.number);
    if (!E164.test(number)) {
      throw validationFailed([
        {
          type: 'string_pattern_mismatch',
          loc: ['path', 'number'],
          msg: 'an E.164 number (+ and 7 to 15 digits), URL-encoded: %2B919812345678',
          input: number,
        },
      ]);
    }
    const removed = await removeFromDoNotCallList(workspace.id, number);
    if (!removed) throw new HttpError(404, 'the number is not on the do-not-call list');
    await audit(req, res, 'do_not_call.removed', number, { source: removed.source, reason: removed.reason });
    res.status(204).end();
  });

  async function audit(req: Request, res: Response, action: string, name: string, details: Record<string, unknown>) {
    await recordWorkspaceAudit(workspaceAccessOf(res).workspace.id, {
      action,
      actor: actorOf(res),
      target: { type: 'do_not_call', id: null, name },
      at: now(),
      ip: clientIp(req),
      details,
    });
  }

  return router;
}

/** The CSV of an import: the multipart field `file` (with an optional `number_column` field), or a text/csv body (`number_column` in the query). */
function importedFile(req: Request): { content: Buffer | string; fileName: string; numberColumn?: string } {
  if (typeof req.body === 'string') {
    const numberColumn = typeof req.query.number_column === 'string' ? req.query.number_column : undefined;
    return { content: req.body, fileName: 'do-not-call.csv', numberColumn };
  }
  const file = ((req.files ?? []) as UploadedFile[]).find((f) => f.fieldname === 'file');
  if (!file)
    throw validationFailed([
      { type: 'missing', loc: ['body', 'file'], msg: 'a CSV file is required in the form field "file", or send the CSV itself as text/csv', input: null },
    ]);
  const form = (req.body ?? {}) as { number_column?: string };
  return { content: file.buffer, fileName: file.originalname, numberColumn: form.number_column };
}
