import type { BatchDocument } from '../../db/models/batch';
import type { BatchContactDocument } from '../../db/models/batch-contact';
import type { components } from '../../schemas/api-types';
import { emptyCounts, type ContactCounts } from '../../contracts/batches';

type BatchView = components['schemas']['Batch'];
type ContactView = components['schemas']['BatchContact'];

/** A batch as the API shows it (dates stay Date; the API renders them in the caller's zone). */
export function batchView(b: BatchDocument) {
  return {
    id: b._id,
    name: b.name,
    agent_id: b.agent_id,
    agent_name: b.agent_name ?? '',
    from_number: b.from_number,
    status: b.status,
    status_reason: b.status_reason ?? null,
    start_at: b.start_at ?? null,
    max_attempts: b.retry.max_attempts,
    retry_spacing_seconds: b.retry.spacing_seconds,
    number_column: b.number_column,
    columns: b.columns ?? [],
    file_name: b.file_name ?? '',
    contacts_total: b.contacts_total,
    rejected_total: b.rejected_total ?? 0,
    counts: countsView({ ...emptyCounts(), ...b.counts }),
    created_by: b.created_by ?? '',
    created_at: b.created_at,
    started_at: b.started_at ?? null,
    ended_at: b.ended_at ?? null,
    updated_at: b.updated_at,
  } satisfies Record<keyof BatchView, unknown>;
}

export function batchContactView(c: BatchContactDocument) {
  return {
    row: c.row,
    number: c.number,
    user_data: (c.user_data ?? {}) as Record<string, string>,
    status: c.status,
    attempts: c.attempts ?? 0,
    latest_call_id: c.latest_call_id ?? null,
    next_attempt_at: c.next_attempt_at ?? null,
    updated_at: c.updated_at,
  } satisfies Record<keyof ContactView, unknown>;
}

/**
 * The contacts per status. `voicemail` (docs/decisions/0159) is shown once a contact of the batch
 * reached it, and is never taken back (the status is final): batches that never met an answering
 * machine show the counts they always did.
 */
function countsView(counts: ContactCounts): Omit<ContactCounts, 'voicemail' | 'do_not_call'> & { voicemail?: number; do_not_call?: number } {
  // `do_not_call` (docs/decisions/0205) likewise, once a contact's number was found on the list.
  const { voicemail, do_not_call, ...rest } = counts;
  return { ...rest, ...(voicemail ? { voicemail } : {}), ...(do_not_call ? { do_not_call } : {}) };
}
