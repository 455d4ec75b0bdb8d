/**
 * Messages of the erasure workflows (docs/decisions/0209), shared by the API (starter), the
 * activities and the workflows. Importing this pulls in no workflow code.
 */

/** Whom an erasure by person is about. Carried in the workflow's input: encrypted by the payload codec (0200). */
export interface ErasureSubject {
  phone: string;
  email: string | null;
}

export interface PersonErasureInput {
  erasureId: string;
  workspaceId: string;
  subject: ErasureSubject;
}

/** Records looked at per activity: a page of the workspace's calls or batch contacts, by id order. */
export const ERASURE_PAGE_SIZE = 100;

/** One page's outcome: `nextAfter` null when the collection is done; `waiting` records (live calls, contacts still to be dialled) are passed again later. */
export interface ErasurePage {
  nextAfter: string | null;
  calls: number;
  contacts: number;
  events: number;
  deliveries: number;
  recordings: number;
  waiting: string[];
}

/** Between passes over records still live or waiting to be called. */
export const WAITING_PASS_INTERVAL = '5 minutes';
/** Passes at most: a queued call waits at most 24 hours, a call lasts at most an hour. */
export const MAX_WAITING_PASSES = 300;

export const personErasureWorkflowId = (erasureId: string) => `privacy-erasure-${erasureId}`;
