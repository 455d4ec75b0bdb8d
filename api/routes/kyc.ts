import { createHash } from 'node:crypto';
import { Router, type Response } from 'express';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { newId } from '../../db/ids';
import { KYC_EDITABLE, KycDocument, KycRecord, type KycStatus } from '../../db/models/kyc';
import { markKycSubmitted } from '../../domain/kyc/review';
import type { operations } from '../../schemas/api-types';
import { sessionUserOf, workspaceAccessOf } from '../auth/context';
import { clientIp } from '../auth/sessions';
import { HttpError } from '../../domain/shared/http-error';
import { businessRuleIssues } from '../../domain/kyc/business-rules';
import { detectDocumentType } from '../../domain/kyc/file-types';
import { kycDocumentView, kycView } from '../../domain/kyc/views';
import { startKycReview } from '../../domain/kyc/temporal';
import { apiRouter } from './router';

type KycDetailsBody = operations['putKyc']['requestBody']['content']['application/json'];

/** At most this many documents per workspace (each up to the upload limit). */
export const MAX_KYC_DOCUMENTS = 10;

/** What express-openapi-validator's multer leaves in `req.files` (memory storage). */
interface UploadedFile {
  fieldname: string;
  originalname: string;
  mimetype: string;
  buffer: Buffer;
}

/**
 * Business details (KYC) of the caller's workspace, its documents, and submission for review.
 * Every query is scoped by the workspace id, so another workspace's document is a 404.
 * Details and documents change only while the record is `draft` or `rejected`; each change is
 * one guarded single-document update, so a change racing a submission either lands before it
 * or answers 409.
 */
export function kycRoutes({ temporal, now }: { temporal: Client; now: () => Date }): Router {
  const router = apiRouter();

  router.get('/kyc', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    res.json(await kycView(await KycRecord.findById(workspace.id).lean()));
  });

  router.put('/kyc', async (req, res) => {
    const body = req.body as KycDetailsBody;
    const issues = businessRuleIssues(body);
    if (issues.length) {
      res.status(422).json({ detail: issues });
      return;
    }
    const details = {
      legal_name: body.legal_name.trim(),
      business_type: body.business_type,
      pan: body.pan,
      gstin: body.gstin ?? null,
      address: { ...body.address, line1: body.address.line1.trim(), line2: body.address.line2?.trim() || null, city: body.address.city.trim() },
      contact: { ...body.contact, name: body.contact.name.trim() },
    };
    const record = await updateEditable(res, { $set: { details, updated_at: now() } });
    res.json(await kycView(record));
  });

  router.post('/kyc/documents', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const user = sessionUserOf(res);
    const file = ((req.files ?? []) as UploadedFile[]).find((f) => f.fieldname === 'file');
    if (!file) {
      res.status(422).json({ detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'a file is required in the form field "file"', input: null }] });
      return;
    }
    const type = detectDocumentType(file.buffer);
    if (!type) {
      throw new HttpError(415, `the file is not a PDF, PNG or JPG (recognised from its content, whatever its declared type "${file.mimetype}" or name)`);
    }
    await assertEditable(workspace.id); // before storing up to 5 MB that could not be attached
    await ensureRecord(workspace.id);
    const document = {
      _id: newId(),
      workspace_id: workspace.id,
      filename: safeFilename(file.originalname, type.extension),
      content_type: type.contentType,
      size_bytes: file.buffer.length,
      sha256: createHash('sha256').update(file.buffer).digest('hex'),
      data: file.buffer,
      uploaded_at: now(),
      uploaded_by: { user_id: user.id, name: user.name },
    };
    // Bytes first, then the guarded attach: a document counts only once the record lists it,
    // so a failed attach leaves no half-added document (the bytes are removed again).
    await KycDocument.create(document);
    try {
      const limitKey = `document_ids.${MAX_KYC_DOCUMENTS - 1}`;
      const attached = await KycRecord.findOneAndUpdate(
        { _id: workspace.id, status: { $in: KYC_EDITABLE }, [limitKey]: { $exists: false } },
        { $push: { document_ids: document._id }, $set: { updated_at: document.uploaded_at } },
      ).lean();
      if (!attached) await refuseChange(workspace.id, `a workspace keeps at most ${MAX_KYC_DOCUMENTS} documents; delete one first`);
    } catch (err) {
      await KycDocument.deleteOne({ _id: document._id });
      throw err;
    }
    res.status(201).json(kycDocumentView(document));
  });

  router.get('/kyc/documents/:doc_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const [record, document] = await Promise.all([
      KycRecord.findById(workspace.id, { document_ids: 1 }).lean(),
      // Hydrated, not lean: lean answers the bytes as a BSON Binary, which send() would turn into JSON.
      KycDocument.findOne({ _id: req.params.doc_id, workspace_id: workspace.id }),
    ]);
    if (!document || !record?.document_ids.includes(document._id)) throw new HttpError(404, 'document not found');
    if (document.erased_at) {
      throw new HttpError(404, `the document's file was erased on ${document.erased_at.toISOString()}: documents are kept 90 days after the decision on them`);
    }
    res
      .set({
        'Content-Type': document.content_type,
        'Content-Disposition': contentDisposition(document.filename),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'private, no-store',
      })
      .send(document.data);
  });

  router.delete('/kyc/documents/:doc_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const docId = req.params.doc_id;
    const detached = await KycRecord.findOneAndUpdate(
      { _id: workspace.id, status: { $in: KYC_EDITABLE }, document_ids: docId },
      { $pull: { document_ids: docId }, $set: { updated_at: now() } },
    ).lean();
    if (!detached) {
      const record = await KycRecord.findById(workspace.id, { document_ids: 1 }).lean();
      if (!record?.document_ids.includes(docId)) throw new HttpError(404, 'document not found');
      await refuseChange(workspace.id, 'the documents changed meanwhile; try again');
    }
    await KycDocument.deleteOne({ _id: docId, workspace_id: workspace.id });
    res.status(204).end();
  });

  router.post('/kyc/submit', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const user = sessionUserOf(res);
    const record = await KycRecord.findById(workspace.id).lean();
    if (record?.status === 'approved') throw notEditable('approved');
    // A `submitted` record goes on to the start, which answers 409 while its review runs (and
    // restarts a review whose workflow was lost, e.g. terminated by ops).
    if (record?.status !== 'submitted') {
      const documents = record?.document_ids.length
        ? await KycDocument.countDocuments({ workspace_id: workspace.id, _id: { $in: record.document_ids }, erased_at: null })
        : 0;
      const missing = [
        ...(record?.details ? [] : ['save the business details (PUT /kyc)']),
        ...(documents ? [] : ['upload at least one document (POST /kyc/documents; erased ones do not count)']),
      ];
      if (missing.length) throw new HttpError(409, `the business details cannot be submitted yet: ${missing.join(' and ')}`);
    }
    const submissionId = newId();
    const submittedBy = { id: user.id, name: user.name };
    try {
      await startKycReview(
        temporal,
        { workspaceId: workspace.id, submissionId, submittedBy, ip: clientIp(req) },
        { workspaceName: workspace.name, submitterEmail: user.email },
      );
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw notEditable('submitted');
      throw err;
    }
    // The workflow marks the record too; doing it here as well makes this answer show it.
    const marked = await markKycSubmitted({ workspaceId: workspace.id, submissionId, submittedBy, at: now() });
    if (!marked) throw notEditable('approved');
    res.status(202).json(await kycView(marked));
  });

  return router;
}

/** Applies a change to a draft or rejected record (creating the draft on first use); 409 otherwise. */
async function updateEditable(res: Response, update: Record<string, unknown>) {
  const { workspace } = workspaceAccessOf(res);
  await ensureRecord(workspace.id);
  const record = await KycRecord.findOneAndUpdate({ _id: workspace.id, status: { $in: KYC_EDITABLE } }, update, { returnDocument: 'after' }).lean();
  return record ?? refuseChange(workspace.id, 'the business details changed meanwhile; try again');
}

/** An insert rather than an upsert: FerretDB 1.24 drops null and empty-array fields of `$setOnInsert`. */
async function ensureRecord(workspaceId: string): Promise<void> {
  if (await KycRecord.exists({ _id: workspaceId })) return;
  try {
    await KycRecord.create({ _id: workspaceId, status: 'draft' });
  } catch (err) {
    // Two first uses at once: the other request created it.
    if ((err as { code?: number }).code !== 11000) throw err;
  }
}

/** 409 when the record is submitted or approved. */
async function assertEditable(workspaceId: string): Promise<void> {
  const record = await KycRecord.findById(workspaceId, { status: 1 }).lean();
  if (record && !KYC_EDITABLE.includes(record.status)) throw notEditable(record.status);
}

/** The 409 that explains why a guarded change did not apply; `whenEditable` when the status was not the reason. */
async function refuseChange(workspaceId: string, whenEditable: string): Promise<never> {
  await assertEditable(workspaceId);
  throw new HttpError(409, whenEditable);
}

function notEditable(status: KycStatus): HttpError {
  return status === 'approved'
    ? new HttpError(409, 'the business details are already approved and can no longer change')
    : new HttpError(409, 'the business details are already submitted and awaiting review; they can change again only if the review rejects them');
}

/** The uploaded name without folders or control characters, or `document.<ext>`. */
function safeFilename(name: string, extension: string): string {
  const base = (name.split(/[/\\]/).pop() ?? '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 200);
  return base || `document.${extension}`;
}

/** `attachment` with an ASCII fallback name and the exact name in RFC 5987 form. */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|[\\%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
