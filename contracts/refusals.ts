import { ActivityFailure, ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';

/**
 * Why a call that reached the front of the queue may not be dialled, or why a batch may queue
 * no call now. Activities raise them as non-retryable `ApplicationFailure`s of these types; the
 * call and batch workflows branch on the type (the message is for people, the timeline and
 * the record).
 */
export const CALL_REFUSALS = {
  AgentDeleted: { reason: 'agent deleted', level: 'warning', callStatus: 'canceled', batch: 'cancel' },
  AgentPaused: { reason: 'agent paused', level: 'warning', callStatus: 'canceled', batch: 'pause' },
  WorkspaceInactive: { reason: 'workspace not active', level: 'error', callStatus: 'canceled', batch: 'pause' },
  OutOfCredits: { reason: 'out of credits', level: 'error', callStatus: 'failed', batch: 'pause' },
  /**
   * The number was put on the workspace's do-not-call list while the call waited (docs/decisions/0205).
   * It holds for this call only: a batch marks the contact `do_not_call` and goes on.
   */
  DoNotCall: { reason: 'number on the do-not-call list', level: 'warning', callStatus: 'canceled', batch: 'contact' },
} as const;

export type CallRefusal = keyof typeof CALL_REFUSALS;

export function isCallRefusal(type: string | null | undefined): type is CallRefusal {
  return typeof type === 'string' && Object.hasOwn(CALL_REFUSALS, type);
}

/**
 * The failure an activity throws for a refusal: non-retryable (it holds until someone acts) and
 * benign (an expected business answer: the worker logs it at debug level and counts no error).
 */
export function callRefusalFailure(refusal: CallRefusal): ApplicationFailure {
  return ApplicationFailure.create({ message: CALL_REFUSALS[refusal].reason, type: refusal, nonRetryable: true, category: ApplicationFailureCategory.BENIGN });
}

/** The refusal an activity's failure carries, or null for any other failure. */
export function refusalOf(error: unknown): CallRefusal | null {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && isCallRefusal(cause.type) ? cause.type : null;
}

/**
 * Histories recorded before refusals were typed carry only the reason text (activity results
 * and call results of that time); replaying them needs this one mapping back. New code never
 * reads a reason to decide.
 */
export function refusalOfRecordedReason(reason: string | null | undefined): CallRefusal | null {
  const found = Object.entries(CALL_REFUSALS).find(([, refusal]) => refusal.reason === reason);
  return found ? (found[0] as CallRefusal) : null;
}
