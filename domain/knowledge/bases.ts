import { createHash } from 'node:crypto';
import { newId } from '../../db/ids';
import {
  CHUNKS_PER_GROUP,
  chunkGroupIds,
  KnowledgeBase,
  KnowledgeChunkGroup,
  KnowledgeDocument,
  KnowledgeSlot,
  type KnowledgeContentType,
} from '../../db/models/knowledge-base';
import { baseIndex, forgetBaseIndex, type IndexedChunk } from './base-index';
import { bm25Score, mergeStats } from './bm25';
import { chunkText } from './chunker';
import { cosine, EmbeddingsFailedError, embedTexts, QUERY_REQUEST, UPLOAD_REQUEST, vectorToBytes } from '../../providers/embeddings/openai-compatible';
import type { EmbeddingsConfig } from '../../config/env';
import { pdfText } from './pdf-text';
import { claimSlot, MAX_DOCUMENTS_PER_BASE, releaseSlot, slotsOf } from './document-slots';
import { encodeTermCounts, termCounts, tokenize } from './tokenizer';

/**
 * Knowledge bases: indexing uploaded documents and finding the passages that answer a
 * question. The API manages bases through these functions; the conversation engine calls
 * `retrieve` on a turn and agents' validation calls `missingKnowledgeBases`.
 */

export { MAX_DOCUMENTS_PER_BASE };
/** About 8 MB of text: what one process can hold and score in memory on every turn. */
export const MAX_CHUNKS_PER_BASE = 10_000;
export const MAX_RETRIEVAL_LIMIT = 20;
/** Reciprocal rank fusion's constant (the value of the RRF paper, used by Elasticsearch and OpenSearch). */
const RRF_K = 60;

export interface RetrievedChunk {
  chunk_id: string;
  knowledge_base_id: string;
  document_id: string;
  document_name: string;
  /** 0-based place of the chunk in its document. */
  position: number;
  text: string;
  /** Higher is better: the BM25 score, or the fused rank score when embeddings take part. */
  score: number;
}

/** `bm25`: lexical only; `hybrid`: BM25 and embedding similarity fused by rank. */
export type RetrievalMode = 'bm25' | 'hybrid';

export class KnowledgeBaseNotFoundError extends Error {
  override name = 'KnowledgeBaseNotFoundError';
}

/** A per-base limit would be exceeded (documents or chunks). */
export class KnowledgeBaseFullError extends Error {
  override name = 'KnowledgeBaseFullError';
}

/** The document has no text to index (an empty file, a scanned PDF without a text layer). */
export class NoTextError extends Error {
  override name = 'NoTextError';
}

/**
 * The ids (each once, in the order given) that are not knowledge bases of the workspace. One
 * read by `_id` per id (an agent holds at most 10): `$in` would read the whole collection on
 * FerretDB.
 */
export async function missingKnowledgeBases(workspaceId: string, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const found = await Promise.all(unique.map((id) => KnowledgeBase.exists({ _id: id, workspace_id: workspaceId })));
  return unique.filter((_, i) => !found[i]);
}

/**
 * The chunks of the workspace's bases that best answer the query, best first. Ids of bases
 * that no longer exist (or belong elsewhere) are skipped, so a call never fails over a base
 * deleted meanwhile. Without embeddings, with chunks lacking vectors, or when the endpoint
 * fails (a live call must not wait on it), the ranking is BM25 alone.
 */
export async function retrieve(request: {
  workspaceId: string;
  knowledgeBaseIds: string[];
  query: string;
  limit: number;
  embeddings: EmbeddingsConfig | null;
}): Promise<RetrievedChunk[]> {
  return (await searchKnowledgeBases(request)).results;
}

export async function searchKnowledgeBases({
  workspaceId,
  knowledgeBaseIds,
  query,
  limit,
  embeddings,
}: {
  workspaceId: string;
  knowledgeBaseIds: string[];
  query: string;
  limit: number;
  /** The configured endpoint (Config.embeddings); null ranks by BM25 alone. */
  embeddings: EmbeddingsConfig | null;
}): Promise<{ mode: RetrievalMode; results: RetrievedChunk[] }> {
  if (!query.trim()) return { mode: 'bm25', results: [] };
  const count = Math.min(Math.max(Math.trunc(limit) || 1, 1), MAX_RETRIEVAL_LIMIT);
  const bases = await Promise.all(
    [...new Set(knowledgeBaseIds)].map((id) => KnowledgeBase.findOne({ _id: id, workspace_id: workspaceId }, { revision: 1 }).lean()),
  );
  const indexes = await Promise.all(bases.filter((b) => b !== null).map((b) => baseIndex(b)));
  const chunks = indexes.flatMap((index) => index.chunks);
  if (!chunks.length) return { mode: 'bm25', results: [] };

  const stats = mergeStats(indexes.map((index) => index.stats));
  const queryTerms = tokenize(query);
  const lexical = ranked(chunks.map((chunk) => ({ chunk, score: bm25Score(queryTerms, chunk.terms, stats) })).filter((s) => s.score > 0));
  const semantic = await semanticRanking(embeddings, query, chunks);
  if (!semantic) return { mode: 'bm25', results: lexical.slice(0, count).map(({ chunk, score }) => view(chunk, score)) };
  return {
    mode: 'hybrid',
    results: fuseByRank([lexical, semantic])
      .slice(0, count)
      .map(({ chunk, score }) => view(chunk, score)),
  };
}

interface Scored {
  chunk: IndexedChunk;
  score: number;
}

/**
 * The chunks by cosine similarity to the query; null when embeddings do not apply. They apply
 * only when every chunk searched carries a vector of the configured model: a chunk without one
 * (uploaded before embeddings were configured, or under another model) could only ever be
 * found lexically, and would lose to any chunk that merely happens to be nearest in meaning.
 * Re-uploading such documents brings their bases back to hybrid ranking.
 */
async function semanticRanking(config: EmbeddingsConfig | null, query: string, chunks: IndexedChunk[]): Promise<Scored[] | null> {
  if (!config || !chunks.every((c) => c.embedding?.model === config.model)) return null;
  let queryVector: Float32Array;
  try {
    [queryVector] = await embedTexts(config, [query], QUERY_REQUEST);
  } catch (err) {
    if (err instanceof EmbeddingsFailedError) return null;
    throw err;
  }
  return ranked(chunks.map((chunk) => ({ chunk, score: cosine(queryVector, chunk.embedding!.vector) })));
}

/**
 * Reciprocal rank fusion: each ranking adds 1 / (k + rank) for every chunk it holds. Ranks,
 * not scores, are combined because BM25 scores and cosine similarities have unrelated
 * scales; a chunk found by both rankings rises above one found by either alone.
 */
function fuseByRank(rankings: Scored[][]): Scored[] {
  const fused = new Map<IndexedChunk, number>();
  for (const ranking of rankings) {
    ranking.forEach(({ chunk }, rank) => fused.set(chunk, (fused.get(chunk) ?? 0) + 1 / (RRF_K + rank + 1)));
  }
  return ranked([...fused].map(([chunk, score]) => ({ chunk, score })));
}

/** Best first; ties in document order, so equal scores always come back in the same order. */
function ranked(scored: Scored[]): Scored[] {
  return scored.sort((a, b) => b.score - a.score || a.chunk.documentId.localeCompare(b.chunk.documentId) || a.chunk.position - b.chunk.position);
}

function view(chunk: IndexedChunk, score: number): RetrievedChunk {
  return {
    chunk_id: chunk.id,
    knowledge_base_id: chunk.knowledgeBaseId,
    document_id: chunk.documentId,
    document_name: chunk.documentName,
    position: chunk.position,
    text: chunk.text,
    score,
  };
}

/**
 * Reads, chunks, indexes (and embeds, when configured) one uploaded file, then adds it to the
 * base: chunk groups and the document record first, the slot that makes them count last.
 * Throws NoTextError, UnreadablePdfError, KnowledgeBaseFullError, EmbeddingsFailedError or
 * KnowledgeBaseNotFoundError (the base was deleted meanwhile).
 */
export async function addDocument(input: {
  workspaceId: string;
  knowledgeBaseId: string;
  name: string;
  contentType: KnowledgeContentType;
  bytes: Buffer;
  uploadedBy: { user_id: string | null; name: string };
  at: Date;
  /** The configured endpoint (Config.embeddings); null stores the document without vectors. */
  embeddings: EmbeddingsConfig | null;
}) {
  const { workspaceId, knowledgeBaseId } = input;
  const text = input.contentType === 'application/pdf' ? await pdfText(input.bytes) : new TextDecoder('utf-8').decode(input.bytes);
  const chunks = chunkText(text, input.contentType === 'text/markdown' ? 'markdown' : 'plain');
  // Headings without sections, punctuation, whitespace: nothing a question could match.
  if (!chunks.length || !/[\p{L}\p{N}]/u.test(text)) throw new NoTextError('the document contains no text to index (a scanned PDF needs a text layer)');

  // Checked before the (possibly slow, possibly paid) embedding; the slot claim below is the
  // atomic check of the document limit. Two uploads at once may pass the chunk limit together.
  const slots = await slotsOf(knowledgeBaseId);
  if (slots.length >= MAX_DOCUMENTS_PER_BASE) throw documentsFull();
  const chunksBefore = slots.reduce((sum, slot) => sum + slot.chunk_count, 0);
  if (chunksBefore + chunks.length > MAX_CHUNKS_PER_BASE) {
    throw new KnowledgeBaseFullError(
      `a knowledge base holds at most ${MAX_CHUNKS_PER_BASE} chunks (about ${MAX_CHUNKS_PER_BASE * 800} characters); it has ${chunksBefore} and this document needs ${chunks.length}`,
    );
  }

  const { embeddings } = input;
  const vectors = embeddings
    ? await embedTexts(
        embeddings,
        chunks.map((c) => c.text),
        UPLOAD_REQUEST,
      )
    : null;
  const document = {
    _id: newId(),
    workspace_id: workspaceId,
    knowledge_base_id: knowledgeBaseId,
    name: input.name,
    content_type: input.contentType,
    size_bytes: input.bytes.length,
    sha256: createHash('sha256').update(input.bytes).digest('hex'),
    character_count: text.length,
    chunk_count: chunks.length,
    embedding_model: embeddings?.model ?? null,
    uploaded_by: input.uploadedBy,
    uploaded_at: input.at,
  };
  const stored = chunks.map((chunk, i) => {
    const counts = termCounts(tokenize(chunk.text));
    return {
      id: newId(),
      position: chunk.position,
      heading: chunk.heading,
      text: chunk.text,
      term_total: [...counts.values()].reduce((sum, n) => sum + n, 0),
      term_counts: encodeTermCounts(counts),
      embedding: vectors ? vectorToBytes(vectors[i]) : null,
    };
  });
  const groupIds = chunkGroupIds(document._id, chunks.length);
  try {
    await KnowledgeChunkGroup.insertMany(
      groupIds.map((id, g) => ({
        _id: id,
        workspace_id: workspaceId,
        knowledge_base_id: knowledgeBaseId,
        document_id: document._id,
        document_name: document.name,
        chunks: stored.slice(g * CHUNKS_PER_GROUP, (g + 1) * CHUNKS_PER_GROUP),
      })),
    );
    await KnowledgeDocument.create(document);
    const claimed = await claimSlot({
      workspace_id: workspaceId,
      knowledge_base_id: knowledgeBaseId,
      document_id: document._id,
      chunk_count: chunks.length,
      embedding_model: document.embedding_model,
    });
    if (!claimed) throw documentsFull();
    const base = await KnowledgeBase.findOneAndUpdate(
      { _id: knowledgeBaseId, workspace_id: workspaceId },
      { $set: { revision: newId(), updated_at: input.at } },
    ).lean();
    if (!base) throw new KnowledgeBaseNotFoundError('knowledge base not found');
  } catch (err) {
    await releaseSlot(knowledgeBaseId, document._id);
    await removeRecords(document._id, chunks.length);
    throw err;
  }
  return document;
}

function documentsFull(): KnowledgeBaseFullError {
  return new KnowledgeBaseFullError(`a knowledge base holds at most ${MAX_DOCUMENTS_PER_BASE} documents; delete one first`);
}

/** The document record and its chunk groups, each deleted by `_id` (a filter on another field would read the whole collection on FerretDB). */
async function removeRecords(documentId: string, chunkCount: number): Promise<void> {
  await Promise.all(chunkGroupIds(documentId, chunkCount).map((id) => KnowledgeChunkGroup.deleteOne({ _id: id })));
  await KnowledgeDocument.deleteOne({ _id: documentId });
}

/** Removes a document and its chunks; false when the base has no such document. */
export async function deleteDocument(workspaceId: string, knowledgeBaseId: string, documentId: string, at: Date): Promise<boolean> {
  const document = await KnowledgeDocument.findOne({ _id: documentId, knowledge_base_id: knowledgeBaseId, workspace_id: workspaceId }).lean();
  if (!document || !(await releaseSlot(knowledgeBaseId, documentId))) return false;
  await KnowledgeBase.updateOne({ _id: knowledgeBaseId, workspace_id: workspaceId }, { $set: { revision: newId(), updated_at: at } });
  await removeRecords(documentId, document.chunk_count);
  return true;
}

/** Removes a base with its documents and chunks; false when the workspace has no such base. */
export async function deleteKnowledgeBase(workspaceId: string, knowledgeBaseId: string): Promise<boolean> {
  const removed = await KnowledgeBase.findOneAndDelete({ _id: knowledgeBaseId, workspace_id: workspaceId }).lean();
  if (!removed) return false;
  forgetBaseIndex(knowledgeBaseId);
  const slots = await slotsOf(knowledgeBaseId);
  await Promise.all(slots.map((slot) => KnowledgeSlot.deleteOne({ _id: slot._id })));
  await Promise.all(slots.map((slot) => removeRecords(slot.document_id, slot.chunk_count)));
  return true;
}

/** The base's documents, oldest first (read through its slots). */
export async function documentsOf(knowledgeBaseId: string) {
  const slots = await slotsOf(knowledgeBaseId);
  const documents = await Promise.all(slots.map((slot) => KnowledgeDocument.findById(slot.document_id).lean()));
  return documents.filter((d) => d !== null).sort((a, b) => a.uploaded_at.getTime() - b.uploaded_at.getTime() || a._id.localeCompare(b._id));
}
