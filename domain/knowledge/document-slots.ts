import { claimFirstFreeSlot } from '../../db/unique-claims';
import { KnowledgeSlot, slotId, type KnowledgeSlotRecord } from '../../db/models/knowledge-base';

/** Slots per base: the most documents a base holds. */
export const MAX_DOCUMENTS_PER_BASE = 50;

export type Slot = KnowledgeSlotRecord & { _id: string };

const allSlotIds = (knowledgeBaseId: string) => Array.from({ length: MAX_DOCUMENTS_PER_BASE }, (_, n) => slotId(knowledgeBaseId, n));

/** The base's documents as its slots list them: every read is by `_id`. */
export async function slotsOf(knowledgeBaseId: string): Promise<Slot[]> {
  const slots = await Promise.all(allSlotIds(knowledgeBaseId).map((id) => KnowledgeSlot.findById(id).lean()));
  return slots.filter((slot) => slot !== null);
}

/**
 * Makes the document part of its base by inserting the first free slot; false when all are
 * taken (two uploads racing for one slot: see claimFirstFreeSlot).
 */
export async function claimSlot(fields: Omit<Slot, '_id'>): Promise<boolean> {
  const taken = new Set((await slotsOf(fields.knowledge_base_id)).map((s) => s._id));
  const claimed = await claimFirstFreeSlot(allSlotIds(fields.knowledge_base_id), taken, (id) => KnowledgeSlot.create({ _id: id, ...fields }));
  return claimed !== null;
}

/** Removes the document from its base; false when no slot holds it. */
export async function releaseSlot(knowledgeBaseId: string, documentId: string): Promise<boolean> {
  const slot = (await slotsOf(knowledgeBaseId)).find((s) => s.document_id === documentId);
  if (!slot) return false;
  return (await KnowledgeSlot.deleteOne({ _id: slot._id, document_id: documentId })).deletedCount === 1;
}
