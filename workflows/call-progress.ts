import { patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { CallStatus } from '../contracts/search-attributes';

/**
 * What a call workflow shows ops in the Temporal UI as it moves: its `CallStatus` search
 * attribute (so that `CallStatus="completed"` finds the calls that ended so) and its current
 * details (`queued at position 3`, `ringing`, `live since 10:42:03 UTC`, `charged 12 paise`).
 * Workflow code: import it only from workflows.
 */

/**
 * An upsert is a command in the history: call workflows that were running before these
 * upserts existed replay their histories without them (the patch is absent there) and upsert
 * from their next new step on. Current details are not in the history and need no patch.
 */
export const CALL_STATUS_PATCH = 'call-status-search-attribute';

/** The call's status changed: the search attribute follows, and the details say what it means now. */
export function showCallStatus(status: string, details: string): void {
  if (patched(CALL_STATUS_PATCH)) upsertSearchAttributes([{ key: CallStatus, value: status }]);
  setCurrentDetails(details);
}

/** What the call is doing, its status unchanged. */
export function showCallDetails(details: string): void {
  setCurrentDetails(details);
}

/** `10:42:03 UTC`: a time of day for one line of details (the date is on the workflow). */
export function clockTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

/** `00:42`, `1:02:05`: a length of time as a call's timer shows it. */
export function callLength(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const [h, m, s] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${two(m)}:${two(s)}` : `${two(m)}:${two(s)}`;
}
