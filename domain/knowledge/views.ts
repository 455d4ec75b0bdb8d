import type { KnowledgeBaseDocument, KnowledgeDocumentRecord, KnowledgeSlotRecord } from '../../db/models/knowledge-base';
import type { components } from '../../schemas/api-types';

type KnowledgeBaseView = components['schemas']['KnowledgeBase'];
type KnowledgeDocumentView = components['schemas']['KnowledgeDocument'];

/** Dates stay Date objects: the timezone middleware renders them in the caller's zone. */
type WithDates<T, K extends keyof T> = Omit<T, K> & { [P in K]: Date };

/** `slots`: the base's documents as its slots list them. */
export function knowledgeBaseView(
  base: KnowledgeBaseDocument & { _id: string },
  slots: Pick<KnowledgeSlotRecord, 'chunk_count'>[],
): WithDates<KnowledgeBaseView, 'created_at' | 'updated_at'> {
  return {
    id: base._id,
    name: base.name,
    description: base.description,
    document_count: slots.length,
    chunk_count: slots.reduce((sum, s) => sum + s.chunk_count, 0),
    created_by: base.created_by.name,
    created_at: base.created_at,
    updated_at: base.updated_at,
  };
}

export function knowledgeDocumentView(document: KnowledgeDocumentRecord & { _id: string }): WithDates<KnowledgeDocumentView, 'uploaded_at'> {
  return {
    id: document._id,
    knowledge_base_id: document.knowledge_base_id,
    name: document.name,
    content_type: document.content_type,
    size_bytes: document.size_bytes,
    character_count: document.character_count,
    chunk_count: document.chunk_count,
    embedding_model: document.embedding_model ?? null,
    uploaded_by: document.uploaded_by.name,
    uploaded_at: document.uploaded_at,
  };
}
