import { Router, type Response } from 'express';
import { assertWorkspaceOpen } from '../../domain/privacy/closing-gate';
import type { Client } from '@temporalio/client';
import { findByIdOwned } from '../../db/by-id';
import { newId } from '../../db/ids';
import { Batch, FINAL_BATCH_STATUSES, type BatchDocument } from '../../db/models/batch';
import { BatchContact, batchContactId, batchContactIdRange, type BatchContactDocument } from '../../db/models/batch-contact';
import type { operations } from '../../schemas/api-types';
import { cancelBatchUpdate, emptyCounts, pauseBatchUpdate, resumeBatchUpdate, type BatchWorkflowInput } from '../../contracts/batches';
import { creatorOf, workspaceAccessOf } from '../auth/context';
import { HttpError, validationFailed } from '../../domain/shared/http-error';
import { outboundCaller } from '../../domain/calls/outbound-caller';
import { MAX_REPORTED_REJECTIONS, parseContactsCsv } from '../../domain/batches/contacts-csv';
import { batchContactView, batchView } from '../../domain/batches/views';
import { controlBatch, startBatchWorkflow } from '../../domain/batches/temporal';
import { apiRouter } from './router';

type BatchForm = operations['createBatch']['requestBody']['content']['multipart/form-data'];
type BatchQuery = NonNullable<operations['listBatches']['parameters']['query']>;
type ContactQuery = NonNullable<operations['listBatchContacts']['parameters']['query']>;

/** What express-openapi-validator's multer leaves in `req.files` (memory storage). */
interface UploadedFile {
  fieldname: string;
  originalname: string;
  buffer: Buffer;
}

/** A batch may be scheduled at most this far ahead. */
const MAX_START_AHEAD_MS = 30 * 24 * 60 * 60 * 1000;
const DEFAULT_MAX_ATTEMPTS = 1;
const DEFAULT_RETRY_SPACING_SECONDS = 1800;
const MAX_RETRY_SPACING_SECONDS = 7 * 24 * 60 * 60;
/** `q` looks at the number and at the values of this many columns after it. */
const SEARCHED_COLUMNS = 3;
/** Contacts are inserted this many at a time. */
const INSERT_CHUNK = 1000;

const batchNotFound = () => new HttpError(404, 'batch not found');

/**
 * Batches of outbound calls from a CSV: creating one (its contacts and its workflow
 * `batch-<id>`), reading batches and their contacts, and pause, resume and cancel (updates of
 * the workflow, answered once saved). After creation the workflow is the batch's only writer.
 * Every lookup is scoped by the workspace.
 */
export function batchRoutes({ temporal, now }: { temporal: Client; now: () => Date }): Router {
  const router = apiRouter();

  router.post('/batches', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const form = req.body as Omit<BatchForm, 'file'>;
    await assertWorkspaceOpen(workspace.id, 'a new batch');
    const file = ((req.files ?? []) as UploadedFile[]).find((f) => f.fieldname === 'file');
    if (!file) throw validationFailed([{ type: 'missing', loc: ['body', 'file'], msg: 'a CSV file is required in the form field "file"', input: null }]);
    const retrySpacing = form.retry_spacing_seconds === undefined ? DEFAULT_RETRY_SPACING_SECONDS : Number(form.retry_spacing_seconds);
    if (retrySpacing > MAX_RETRY_SPACING_SECONDS) {
      throw validationFailed([
        {
          type: 'less_than_equal',
          loc: ['body', 'retry_spacing_seconds'],
          msg: `at most ${MAX_RETRY_SPACING_SECONDS} seconds (7 days)`,
          input: form.retry_spacing_seconds,
        },
      ]);
    }
    const at = now();
    const startAt = form.start_at ? new Date(form.start_at) : null;
    if (startAt && startAt.getTime() - at.getTime() > MAX_START_AHEAD_MS) {
      throw validationFailed([{ type: 'value_error', loc: ['body', 'start_at'], msg: 'at most 30 days ahead', input: form.start_at }]);
    }
    const { agent, fromNumber } = await outboundCaller(workspace.id, form.agent_id, form.from_number);

    const parsed = parseContactsCsv(file.buffer, form.number_column);
    if (!parsed.ok) throw validationFailed([{ type: 'value_error', loc: ['body', 'file'], msg: parsed.reason, input: file.originalname }]);
    const rejectedRows = parsed.rejected.slice(0, MAX_REPORTED_REJECTIONS);
    if (!parsed.contacts.length) {
      throw new HttpError(
        422,
        [
          {
            type: 'value_error',
            loc: ['body', 'file'],
            msg: 'no contact to call: the file has no rows, or every row was rejected (see rejected_rows)',
            input: file.originalname,
          },
        ],
        { rejected_rows: rejectedRows },
      );
    }

    const batchId = newId();
    for (let start = 0; start < parsed.contacts.length; start += INSERT_CHUNK) {
      const chunk = parsed.contacts.slice(start, start + INSERT_CHUNK).map((contact, i) => ({
        _id: batchContactId(batchId, start + i),
        batch_id: batchId,
        workspace_id: workspace.id,
        index: start + i,
        row: contact.row,
        number: contact.number,
        user_data: contact.user_data,
        status: 'pending' as const,
        updated_at: at,
      }));
      await BatchContact.insertMany(chunk, { ordered: false });
    }
    const scheduled = startAt !== null && startAt > at;
    const retry = { max_attempts: form.max_attempts === undefined ? DEFAULT_MAX_ATTEMPTS : Number(form.max_attempts), spacing_seconds: retrySpacing };
    const created = await Batch.create({
      _id: batchId,
      workspace_id: workspace.id,
      name: form.name?.trim() || file.originalname.replace(/\.[^.]*$/, '') || 'Batch',
      agent_id: agent._id,
      agent_name: agent.name,
      from_number: fromNumber,
      status: scheduled ? 'scheduled' : 'running',
      start_at: startAt,
      retry,
      number_column: parsed.numberColumn,
      columns: parsed.columns,
      file_name: file.originalname,
      contacts_total: parsed.contacts.length,
      rejected_total: parsed.rejected.length,
      counts: { ...emptyCounts(), pending: parsed.contacts.length },
      created_by: creatorOf(res).name,
      created_at: at,
      updated_at: at,
    });
    const input: BatchWorkflowInput = {
      batchId,
      workspaceId: workspace.id,
      agentId: agent._id,
      contactsTotal: parsed.contacts.length,
      startAt: startAt?.toISOString() ?? null,
      retry: { maxAttempts: retry.max_attempts, spacingSeconds: retry.spacing_seconds },
    };
    await startBatchWorkflow(temporal, input, {
      name: created.name,
      agentName: agent.name,
      fromNumber,
      createdBy: created.created_by,
      fileName: file.originalname,
      retry,
    });
    res.status(201).json({ batch: batchView(created.toObject<BatchDocument>()), rejected_rows: rejectedRows });
  });

  router.get('/batches', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const query = req.query as unknown as BatchQuery;
    const filter: Record<string, unknown> = { workspace_id: workspace.id };
    if (query.status) filter.status = { $in: [...new Set(query.status.split(','))] };
    if (query.agent_id) filter.agent_id = query.agent_id;
    const [items, total] = await Promise.all([
      Batch.find(filter)
        .sort({ created_at: -1, _id: -1 })
        .skip(query.skip ?? 0)
        .limit(query.limit ?? 50)
        .lean<BatchDocument[]>(),
      Batch.countDocuments(filter),
    ]);
    res.json({ items: items.map(batchView), total });
  });

  router.get('/batches/:batch_id', async (req, res) => {
    res.json(batchView(await batchOf(res, req.params.batch_id)));
  });

  const controls = [
    ['pause', pauseBatchUpdate, 'paused'],
    ['resume', resumeBatchUpdate, 'resumed'],
    ['cancel', cancelBatchUpdate, 'canceled'],
  ] as const;
  for (const [action, update, done] of controls) {
    router.post(`/batches/:batch_id/${action}`, async (req, res) => {
      const batch = await batchOf(res, req.params.batch_id);
      if (FINAL_BATCH_STATUSES.includes(batch.status)) throw new HttpError(409, `the batch is ${batch.status}: it cannot be ${done}`);
      // Resuming would start new calls; pausing and cancelling stay open to a closing workspace.
      if (action === 'resume') await assertWorkspaceOpen(batch.workspace_id, 'a batch resumed');
      await controlBatch(temporal, batch._id, update, creatorOf(res).name);
      res.json(batchView(await batchOf(res, batch._id)));
    });
  }

  router.get('/batches/:batch_id/contacts', async (req, res) => {
    const batch = await batchOf(res, req.params.batch_id);
    const query = req.query as unknown as ContactQuery;
    // By the batch's id range: the contacts' ids sort in file order.
    const filter: Record<string, unknown> = { _id: batchContactIdRange(batch._id) };
    if (query.status) filter.status = { $in: [...new Set(query.status.split(','))] };
    if (query.q) {
      const pattern = new RegExp(escapeRegExp(query.q), 'i');
      filter.$or = [{ number: pattern }, ...(batch.columns ?? []).slice(0, SEARCHED_COLUMNS).map((column) => ({ [`user_data.${column}`]: pattern }))];
    }
    const [items, total] = await Promise.all([
      BatchContact.find(filter)
        .sort({ _id: 1 })
        .skip(query.skip ?? 0)
        .limit(query.limit ?? 50)
        .lean<BatchContactDocument[]>(),
      BatchContact.countDocuments(filter),
    ]);
    res.json({ items: items.map(batchContactView), total });
  });

  return router;
}

async function batchOf(res: Response, batchId: string): Promise<BatchDocument> {
  const { workspace } = workspaceAccessOf(res);
  const batch = await findByIdOwned<BatchDocument>(Batch, batchId, { workspace_id: workspace.id });
  if (!batch) throw batchNotFound();
  return batch;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
