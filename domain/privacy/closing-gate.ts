import { Workspace } from '../../db/models/workspace';
import { HttpError } from '../shared/http-error';

/**
 * What a closing workspace refuses (docs/decisions/0210): from the owner's `POST /workspace/close`
 * on, nothing that makes new callers' data starts (calls, batches); members still read and
 * export. Once its data is being erased, live calls (inbound) are refused too.
 */

const closureOf = async (workspaceId: string) =>
  ((await Workspace.findById(workspaceId, { closure: 1 }).lean())?.closure as { status: string; erase_at: Date } | null | undefined) ?? null;

/** 409 `workspace_closing` for `what` (e.g. "a new call") while the workspace is closing or closed. */
export async function assertWorkspaceOpen(workspaceId: string, what: string): Promise<void> {
  const closure = await closureOf(workspaceId);
  if (!closure) return;
  const when =
    closure.status === 'scheduled'
      ? `its data will be erased at ${closure.erase_at.toISOString()}; an owner can cancel that with POST /workspace/close/cancel`
      : `its data is ${closure.status}`;
  throw new HttpError(409, `the workspace is closing: ${what} cannot start (${when})`, { code: 'workspace_closing' });
}

/** True once the workspace's data is being erased or has been: a live call is not admitted. */
export async function isWorkspaceErased(workspaceId: string): Promise<boolean> {
  const closure = await closureOf(workspaceId);
  return closure !== null && closure.status !== 'scheduled';
}
