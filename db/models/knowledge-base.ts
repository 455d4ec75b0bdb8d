import { Schema, model, type InferSchemaType } from 'mongoose';

/**
 * Knowledge bases, their documents and the documents' chunks, laid out for FerretDB 1.24,
 * where only a filter on `_id` uses an index (any other filter reads the whole collection:
 * 4 s over 6500 chunks) and an update is a read-modify-write of the whole document (30
 * concurrent `$push`es onto one array kept between 6 and 27 of them). So:
 *
 * - nothing is ever pushed onto a shared array: every write is an insert, a delete, or a
 *   `$set` whose lost race does not matter (the base's `revision`);
 * - retrieval reads by `_id` only: a base's documents are found through its slots
 *   (`<kb_id>:0` to `<kb_id>:49`), a document's chunks through its chunk groups
 *   (`<document_id>:0`, `:1`, ...), whose ids follow from the slot's `chunk_count`.
 *
 * A slot is what makes a document part of its base. An upload writes the chunk groups and
 * the document record first and claims a free slot last, by inserting it: the unique `_id`
 * makes the claim atomic and enforces the documents-per-base limit. A deletion removes the
 * base record or the slot first. A crash in between leaves unreachable records, never a slot
 * pointing at something deleted.
 */

/** Who created or uploaded: the person (null for an API key) and the name lists show. */
const actorSchema = new Schema({ user_id: { type: String, default: null }, name: { type: String, required: true } }, { _id: false });

/** A base. `revision` is set to a new random value whenever a document is added or removed; retrieval caches by it. */
const knowledgeBaseSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: '' },
    revision: { type: String, required: true },
    created_by: { type: actorSchema, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'knowledge_bases', versionKey: false },
);
knowledgeBaseSchema.index({ workspace_id: 1, created_at: -1 });

export const KNOWLEDGE_CONTENT_TYPES = ['application/pdf', 'text/plain', 'text/markdown'] as const;
export type KnowledgeContentType = (typeof KNOWLEDGE_CONTENT_TYPES)[number];

/** An uploaded file's description. Only its text is kept (in the chunks), not the file itself. */
const knowledgeDocumentSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    knowledge_base_id: { type: String, required: true },
    name: { type: String, required: true },
    content_type: { type: String, enum: KNOWLEDGE_CONTENT_TYPES, required: true },
    size_bytes: { type: Number, required: true },
    sha256: { type: String, required: true },
    character_count: { type: Number, required: true },
    chunk_count: { type: Number, required: true },
    /** The model whose vectors its chunks carry; null when embeddings were off at upload. */
    embedding_model: { type: String, default: null },
    uploaded_by: { type: actorSchema, required: true },
    uploaded_at: { type: Date, required: true },
  },
  { collection: 'knowledge_documents', versionKey: false },
);

/** A document's place in its base, with what retrieval needs to load it without reading the document. */
const knowledgeSlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    knowledge_base_id: { type: String, required: true },
    document_id: { type: String, required: true },
    chunk_count: { type: Number, required: true },
    embedding_model: { type: String, default: null },
  },
  { collection: 'knowledge_slots', versionKey: false },
);
// Only the list of bases reads slots other than by _id.
knowledgeSlotSchema.index({ workspace_id: 1 });

/**
 * One passage with what BM25 needs of it, computed once at upload: its distinct terms with
 * their counts (`term:count` pairs in one string, see `encodeTermCounts`) and its length in
 * terms. Collection-wide numbers (chunk count, average length, document
 * frequencies) change with every upload, so they are derived when a base is loaded.
 * `embedding` is the unit-length vector as little-endian float32 bytes (4 bytes a dimension,
 * a quarter of an array of BSON doubles).
 */
const chunkSchema = new Schema(
  {
    id: { type: String, required: true },
    position: { type: Number, required: true },
    heading: { type: String, default: null },
    text: { type: String, required: true },
    term_total: { type: Number, required: true },
    term_counts: { type: String, default: '' },
    embedding: { type: Buffer, default: null },
  },
  { _id: false },
);

/** Up to CHUNKS_PER_GROUP consecutive chunks of a document: one read loads them. */
const knowledgeChunkGroupSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    knowledge_base_id: { type: String, required: true },
    document_id: { type: String, required: true },
    document_name: { type: String, required: true },
    chunks: { type: [chunkSchema], default: [] },
  },
  { collection: 'knowledge_chunk_groups', versionKey: false },
);

/** 50 chunks of about 800 characters, with 1536-dimension vectors: about 0.5 MB a group. */
export const CHUNKS_PER_GROUP = 50;

export const slotId = (knowledgeBaseId: string, slot: number) => `${knowledgeBaseId}:${slot}`;
export const chunkGroupIds = (documentId: string, chunkCount: number) =>
  Array.from({ length: Math.ceil(chunkCount / CHUNKS_PER_GROUP) }, (_, group) => `${documentId}:${group}`);

export type KnowledgeBaseDocument = InferSchemaType<typeof knowledgeBaseSchema>;
export type KnowledgeDocumentRecord = InferSchemaType<typeof knowledgeDocumentSchema>;
export type KnowledgeSlotRecord = InferSchemaType<typeof knowledgeSlotSchema>;
export const KnowledgeBase = model('KnowledgeBase', knowledgeBaseSchema);
export const KnowledgeDocument = model('KnowledgeDocument', knowledgeDocumentSchema);
export const KnowledgeSlot = model('KnowledgeSlot', knowledgeSlotSchema);
export const KnowledgeChunkGroup = model('KnowledgeChunkGroup', knowledgeChunkGroupSchema);
