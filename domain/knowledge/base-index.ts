import { chunkGroupIds, KnowledgeChunkGroup } from '../../db/models/knowledge-base';
import { corpusStats, type CorpusStats, type ScoredTerms } from './bm25';
import { vectorFromBytes } from '../../providers/embeddings/openai-compatible';
import { slotsOf } from './document-slots';
import { decodeTermCounts } from './tokenizer';

/** A chunk as retrieval scores and returns it. */
export interface IndexedChunk {
  id: string;
  knowledgeBaseId: string;
  documentId: string;
  documentName: string;
  position: number;
  text: string;
  terms: ScoredTerms;
  /** Unit-length vector, and the model that made it; null when embeddings were off at upload. */
  embedding: { model: string; vector: Float32Array } | null;
}

/** Everything retrieval needs of one base, valid for one revision of it. */
export interface BaseIndex {
  revision: string;
  chunks: IndexedChunk[];
  stats: CorpusStats;
}

/**
 * Retrieval runs on every turn of a live call, so each process keeps the bases it has loaded,
 * keyed by the base's revision (a new random value after every document added or removed).
 * Each search still reads the base record by `_id` (one indexed read) and reloads when the
 * revision differs, so a change made by any process is seen on the next search. Least
 * recently used bases are dropped beyond a total number of chunks (about 10 KB each with a
 * 1536-dimension vector).
 */
const MAX_CACHED_CHUNKS = 20_000;
const cache = new Map<string, BaseIndex>();

export async function baseIndex(base: { _id: string; revision: string }): Promise<BaseIndex> {
  const cached = cache.get(base._id);
  if (cached?.revision === base.revision) {
    cache.delete(base._id); // re-inserted below: Map order is the recency order
    cache.set(base._id, cached);
    return cached;
  }
  const loaded = await loadIndex(base._id, base.revision);
  cache.delete(base._id);
  cache.set(base._id, loaded);
  evictBeyondLimit();
  return loaded;
}

export function forgetBaseIndex(knowledgeBaseId: string): void {
  cache.delete(knowledgeBaseId);
}

/** Slots, then each document's chunk groups: every read is by `_id`. */
async function loadIndex(knowledgeBaseId: string, revision: string): Promise<BaseIndex> {
  const slots = await slotsOf(knowledgeBaseId);
  const groups = await Promise.all(
    slots.flatMap((slot) =>
      chunkGroupIds(slot.document_id, slot.chunk_count).map(async (id) => ({ slot, group: await KnowledgeChunkGroup.findById(id).lean() })),
    ),
  );
  const chunks: IndexedChunk[] = [];
  for (const { slot, group } of groups) {
    for (const chunk of group?.chunks ?? []) {
      chunks.push({
        id: chunk.id,
        knowledgeBaseId,
        documentId: slot.document_id,
        documentName: group!.document_name,
        position: chunk.position,
        text: chunk.text,
        terms: { length: chunk.term_total, counts: decodeTermCounts(chunk.term_counts) },
        embedding: slot.embedding_model && chunk.embedding ? { model: slot.embedding_model, vector: vectorFromBytes(chunk.embedding) } : null,
      });
    }
  }
  return { revision, chunks, stats: corpusStats(chunks.map((c) => c.terms)) };
}

function evictBeyondLimit(): void {
  let total = [...cache.values()].reduce((sum, index) => sum + index.chunks.length, 0);
  for (const [id, index] of cache) {
    if (total <= MAX_CACHED_CHUNKS || cache.size === 1) break;
    cache.delete(id);
    total -= index.chunks.length;
  }
}
