import { Router, type Response } from 'express';
import { newId } from '../../db/ids';
import { Agent } from '../../db/models/agent';
import { KnowledgeBase, KnowledgeSlot } from '../../db/models/knowledge-base';
import {
  addDocument,
  deleteDocument,
  deleteKnowledgeBase,
  documentsOf,
  KnowledgeBaseFullError,
  KnowledgeBaseNotFoundError,
  NoTextError,
  searchKnowledgeBases,
} from '../../domain/knowledge/bases';
import { EmbeddingsFailedError } from '../../providers/embeddings/openai-compatible';
import { UnreadablePdfError } from '../../domain/knowledge/pdf-text';
import { slotsOf } from '../../domain/knowledge/document-slots';
import type { operations } from '../../schemas/api-types';
import type { EmbeddingsConfig } from '../../config/env';
import { actorOf, workspaceAccessOf } from '../auth/context';
import { HttpError, validationFailed } from '../../domain/shared/http-error';
import { detectKnowledgeType, documentName } from '../../domain/knowledge/document-types';
import { knowledgeBaseView, knowledgeDocumentView } from '../../domain/knowledge/views';
import { apiRouter } from './router';

type KnowledgeBaseBody = operations['createKnowledgeBase']['requestBody']['content']['application/json'];
type SearchBody = operations['searchKnowledgeBase']['requestBody']['content']['application/json'];

/** Bounds the list (which has no paging) and what one workspace can store. */
export const MAX_KNOWLEDGE_BASES_PER_WORKSPACE = 100;

/** What express-openapi-validator's multer leaves in `req.files` (memory storage). */
interface UploadedFile {
  fieldname: string;
  originalname: string;
  mimetype: string;
  buffer: Buffer;
}

/**
 * Knowledge bases of the caller's workspace and their documents. Every query is scoped by the
 * workspace id, so another workspace's base or document is a 404.
 */
export function knowledgeBaseRoutes({ now, embeddings }: { now: () => Date; embeddings: EmbeddingsConfig | null }): Router {
  const router = apiRouter();

  router.get('/knowledge-bases', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    // Two reads of the workspace's records (filters other than _id), not one per base.
    const [bases, slots] = await Promise.all([
      KnowledgeBase.find({ workspace_id: workspace.id }).sort({ created_at: -1 }).lean(),
      KnowledgeSlot.find({ workspace_id: workspace.id }, { knowledge_base_id: 1, chunk_count: 1 }).lean(),
    ]);
    res.json(
      bases.map((base) =>
        knowledgeBaseView(
          base,
          slots.filter((s) => s.knowledge_base_id === base._id),
        ),
      ),
    );
  });

  router.post('/knowledge-bases', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as KnowledgeBaseBody;
    // Counted, not guarded: two creations at once may both pass at the limit, which only bounds storage.
    if ((await KnowledgeBase.countDocuments({ workspace_id: workspace.id })) >= MAX_KNOWLEDGE_BASES_PER_WORKSPACE) {
      throw new HttpError(409, `a workspace holds at most ${MAX_KNOWLEDGE_BASES_PER_WORKSPACE} knowledge bases; delete one first`);
    }
    const at = now();
    const base = await KnowledgeBase.create({
      _id: newId(),
      workspace_id: workspace.id,
      name: body.name.trim(),
      description: (body.description ?? '').trim(),
      revision: newId(),
      created_by: actorRecord(res),
      created_at: at,
      updated_at: at,
    });
    res.status(201).json(knowledgeBaseView(base.toObject(), []));
  });

  router.get('/knowledge-bases/:kb_id', async (req, res) => {
    const base = await findBase(res, req.params.kb_id);
    res.json(knowledgeBaseView(base, await slotsOf(base._id)));
  });

  router.delete('/knowledge-bases/:kb_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const kbId = req.params.kb_id;
    await findBase(res, kbId);
    const agents = await Agent.find({ workspace_id: workspace.id, knowledge_base_ids: kbId }, { name: 1 }).lean();
    if (agents.length) {
      const names = agents.map((a) => `"${a.name}" (${a._id})`).join(', ');
      throw new HttpError(
        409,
        `the knowledge base is used by ${agents.length === 1 ? 'the agent' : 'the agents'} ${names}; remove it from their knowledge_base_ids first`,
      );
    }
    if (!(await deleteKnowledgeBase(workspace.id, kbId))) throw notFound();
    res.status(204).end();
  });

  router.get('/knowledge-bases/:kb_id/documents', async (req, res) => {
    const base = await findBase(res, req.params.kb_id);
    res.json((await documentsOf(base._id)).map(knowledgeDocumentView));
  });

  router.post('/knowledge-bases/:kb_id/documents', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const base = await findBase(res, req.params.kb_id);
    const file = ((req.files ?? []) as UploadedFile[]).find((f) => f.fieldname === 'file');
    if (!file) throw validationFailed([{ type: 'missing', loc: ['body', 'file'], msg: 'a file is required in the form field "file"', input: null }]);
    const contentType = detectKnowledgeType(file.buffer, file.originalname, file.mimetype);
    if (!contentType) {
      throw new HttpError(
        415,
        `the file is not a PDF, nor UTF-8 text named .txt/.md or declared text/plain or text/markdown (declared type "${file.mimetype}")`,
      );
    }
    try {
      const document = await addDocument({
        workspaceId: workspace.id,
        knowledgeBaseId: base._id,
        name: documentName(file.originalname, contentType),
        contentType,
        bytes: file.buffer,
        uploadedBy: actorRecord(res),
        at: now(),
        embeddings,
      });
      res.status(201).json(knowledgeDocumentView(document));
    } catch (err) {
      throw uploadError(err, file.originalname);
    }
  });

  router.delete('/knowledge-bases/:kb_id/documents/:document_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    if (!(await deleteDocument(workspace.id, req.params.kb_id, req.params.document_id, now()))) throw new HttpError(404, 'document not found');
    res.status(204).end();
  });

  router.post('/knowledge-bases/:kb_id/search', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const base = await findBase(res, req.params.kb_id);
    const body = req.body as SearchBody;
    res.json(await searchKnowledgeBases({ workspaceId: workspace.id, knowledgeBaseIds: [base._id], query: body.query, limit: body.limit ?? 5, embeddings }));
  });

  return router;
}

function notFound(): HttpError {
  return new HttpError(404, 'knowledge base not found');
}

async function findBase(res: Response, kbId: string) {
  const base = await KnowledgeBase.findOne({ _id: kbId, workspace_id: workspaceAccessOf(res).workspace.id }).lean();
  if (!base) throw notFound();
  return base;
}

/** Who created or uploaded, as stored: the person, or `key:<name>` for an API key. */
function actorRecord(res: Response): { user_id: string | null; name: string } {
  const actor = actorOf(res);
  return { user_id: actor.type === 'api_key' ? null : actor.id, name: actor.name ?? 'unknown' };
}

/** The answer for each way indexing an upload can fail; anything else stays a 500. */
function uploadError(err: unknown, filename: string): unknown {
  if (err instanceof NoTextError || err instanceof UnreadablePdfError) {
    return validationFailed([{ type: 'value_error', loc: ['body', 'file'], msg: err.message, input: filename }]);
  }
  if (err instanceof KnowledgeBaseFullError) return new HttpError(409, err.message);
  if (err instanceof KnowledgeBaseNotFoundError) return notFound();
  if (err instanceof EmbeddingsFailedError) return new HttpError(502, `${err.message}; nothing was stored, try again`);
  return err;
}
