import { missingKnowledgeBases } from '../knowledge/bases';
import { assignNumberToAgent, NumberNotInWorkspaceError, NumberTakenError, releaseNumbersOfAgent } from '../numbers/phone-numbers';
import type { Principal, WorkspaceAccess } from '../accounts/principal';
import { HttpError, validationFailed } from '../shared/http-error';
import { requirePermission } from '../accounts/require-permission';
import type { ValidationIssue } from '../shared/validation-issues';

/**
 * What an agent points at in other resources: its phone number and its knowledge bases. The
 * phone numbers and knowledge bases modules own those records; this is the agents' one door
 * to them.
 */

/**
 * Changing an agent's number connects or disconnects a number, which needs `numbers.manage`
 * (not only `agents.edit`); sending the current number again is not a change.
 */
export function checkMayChangeNumber(principal: Principal, access: WorkspaceAccess): void {
  requirePermission('numbers.manage', principal, access, "change an agent's phone number");
}

/** Connects `number` to the agent (null: disconnects its number); 422 or 409 as the contract says. */
export async function assignPhoneNumber(workspaceId: string, agentId: string, number: string | null): Promise<void> {
  try {
    await assignNumberToAgent(workspaceId, agentId, number);
  } catch (err) {
    if (err instanceof NumberNotInWorkspaceError) {
      throw validationFailed([{ type: 'value_error', loc: ['body', 'phone_number'], msg: 'not a number of this workspace', input: number }]);
    }
    if (err instanceof NumberTakenError) throw new HttpError(409, `${number} is used by another workspace`);
    throw err;
  }
}

export async function releasePhoneNumbers(workspaceId: string, agentId: string): Promise<void> {
  await releaseNumbersOfAgent(workspaceId, agentId);
}

/** A 422 issue for every id that is not a knowledge base of the workspace. */
export async function unknownKnowledgeBaseIssues(workspaceId: string, ids: string[]): Promise<ValidationIssue[]> {
  if (ids.length === 0) return [];
  const missing = new Set(await missingKnowledgeBases(workspaceId, ids));
  return ids.flatMap((id, i) =>
    missing.has(id) ? [{ type: 'value_error', loc: ['body', 'knowledge_base_ids', i], msg: 'no knowledge base with this id in the workspace', input: id }] : [],
  );
}
