import { BatchContact } from '../../db/models/batch-contact';
import { Call, type CallDocument } from '../../db/models/call';
import { PrivacyErasure } from '../../db/models/privacy-erasure';
import { ERASURE_PAGE_SIZE, type ErasurePage, type ErasureSubject } from '../../contracts/privacy';
import { eraseCall, isErasable } from './call-erasure';

/** Contact statuses after which the batch never dials the contact again. */
export const FINAL_CONTACT_STATUSES = ['completed', 'voicemail', 'no-answer', 'busy', 'failed', 'canceled', 'do_not_call'];

/** `+91******5670`: the country code and the last four digits. */
export function maskedPhone(phone: string): string {
  return phone.length <= 7 ? '*'.repeat(phone.length) : `${phone.slice(0, 3)}${'*'.repeat(phone.length - 7)}${phone.slice(-4)}`;
}

/** True when a value (a number, a user_data value) is about the person: their number, or their email in any case. */
export function mentionsSubject(subject: ErasureSubject, values: unknown[]): boolean {
  const email = subject.email?.toLowerCase() ?? null;
  return values.some((value) => typeof value === 'string' && (value === subject.phone || (email !== null && value.trim().toLowerCase() === email)));
}

const callMentions = (subject: ErasureSubject, call: Pick<CallDocument, 'to_number' | 'from_number' | 'user_data'>) =>
  mentionsSubject(subject, [call.to_number, call.from_number, ...Object.values((call.user_data ?? {}) as Record<string, unknown>)]);

/**
 * One page of the workspace's calls after `after` (by id): erases those about the person; a
 * call not final yet is left for a later pass (`waiting`). Safe to run again (the erasure of a
 * call is; an erased call no longer names the person).
 */
export async function erasePersonCallsPage(workspaceId: string, subject: ErasureSubject, after: string | null, at: Date): Promise<ErasurePage> {
  const page = await Call.find({ workspace_id: workspaceId, ...(after ? { _id: { $gt: after } } : {}) })
    .sort({ _id: 1 })
    .limit(ERASURE_PAGE_SIZE)
    .lean<CallDocument[]>();
  const result: ErasurePage = {
    nextAfter: page.length === ERASURE_PAGE_SIZE ? page[page.length - 1]._id : null,
    calls: 0,
    contacts: 0,
    events: 0,
    deliveries: 0,
    recordings: 0,
    waiting: [],
  };
  for (const call of page) {
    if (!callMentions(subject, call)) continue;
    if (!isErasable(call.status)) {
      result.waiting.push(call._id);
      continue;
    }
    const erased = await eraseCall(call, at);
    // Counted once: an activity run again finds the call erased (and its parts already gone), and adds nothing.
    if (!call.erased_at) result.calls++;
    result.events += erased.events;
    result.deliveries += erased.deliveries;
    if (erased.recording) result.recordings++;
  }
  return result;
}

/** One page of the workspace's batch contacts: erases the number and user_data of those about the person that the batch will not dial again. */
export async function erasePersonContactsPage(workspaceId: string, subject: ErasureSubject, after: string | null, at: Date): Promise<ErasurePage> {
  const page = await BatchContact.find({ workspace_id: workspaceId, ...(after ? { _id: { $gt: after } } : {}) }, { number: 1, user_data: 1, status: 1 })
    .sort({ _id: 1 })
    .limit(ERASURE_PAGE_SIZE)
    .lean();
  const result: ErasurePage = {
    nextAfter: page.length === ERASURE_PAGE_SIZE ? page[page.length - 1]._id : null,
    calls: 0,
    contacts: 0,
    events: 0,
    deliveries: 0,
    recordings: 0,
    waiting: [],
  };
  for (const contact of page) {
    if (!mentionsSubject(subject, [contact.number, ...Object.values((contact.user_data ?? {}) as Record<string, unknown>)])) continue;
    if (!FINAL_CONTACT_STATUSES.includes(contact.status)) {
      result.waiting.push(contact._id);
      continue;
    }
    await eraseBatchContact(contact._id, at);
    result.contacts++;
  }
  return result;
}

/** A contact's number and user_data erased; its status, attempts and latest call stay for the batch's counts. */
export async function eraseBatchContact(contactId: string, at: Date): Promise<void> {
  await BatchContact.updateOne({ _id: contactId }, { $set: { number: '', user_data: {}, updated_at: at } });
}

/** Adds a page's counts to the erasure's record (what `GET /privacy/erasures/{id}` shows while it runs). */
export async function recordErasureProgress(erasureId: string, page: ErasurePage, at: Date): Promise<void> {
  await PrivacyErasure.updateOne(
    { _id: erasureId },
    {
      $inc: {
        calls_erased: page.calls,
        contacts_erased: page.contacts,
        events_erased: page.events,
        deliveries_erased: page.deliveries,
        recordings_erased: page.recordings,
      },
      $set: { updated_at: at },
    },
  );
}
