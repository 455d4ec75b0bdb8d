import { isDuplicateKeyError } from '../../db/errors';
import { newId } from '../../db/ids';
import { Agent } from '../../db/models/agent';
import { PhoneNumber, freeConnectionKey } from '../../db/models/phone-number';

/**
 * A workspace's phone numbers and their connections to agents.
 *
 * The number record (`phone_numbers`) is the truth: `agent_id` says which agent answers the
 * number. `Agent.phone_number` is derived from it and written after it, so a crash between
 * the two writes leaves only a stale agent field, which `repairAgentNumbers` (run when the
 * numbers are listed) and the next change of either side put right. An agent holds at most
 * one number: the unique `connection_key` refuses a second one even under concurrent
 * connects.
 */

/** The number is not one of the workspace's numbers. */
export class NumberNotInWorkspaceError extends Error {
  constructor(readonly number: string) {
    super(`${number} is not one of this workspace's numbers`);
    this.name = 'NumberNotInWorkspaceError';
  }
}

/** Another workspace holds the number. */
export class NumberTakenError extends Error {
  constructor(readonly number: string) {
    super(`${number} is used by another workspace`);
    this.name = 'NumberTakenError';
  }
}

/** The telephony provider's account does not offer the number (or not for voice). */
export class NumberNotInPoolError extends Error {
  constructor(readonly number: string) {
    super(`${number} is not available from the telephony provider`);
    this.name = 'NumberNotInPoolError';
  }
}

export interface ClaimedNumber {
  _id: string;
  number: string;
  workspace_id: string;
  agent_id: string | null;
  region: string;
  number_type: string;
  claimed_at: Date;
  claimed_by: string;
  connected_at: Date | null;
}

/** What the telephony provider says about a number it offers. */
export interface PoolNumber {
  region: string;
  numberType: string;
}

/**
 * Takes a number of the provider pool into the workspace. Claiming a number the workspace
 * already holds changes nothing (`created: false`), so a retried request is harmless; a
 * number another workspace holds is a NumberTakenError (the unique index on `number` decides
 * between two workspaces claiming at once). `lookUp` asks the provider, only for a number no
 * workspace holds; null means the provider does not offer it (NumberNotInPoolError).
 */
export async function claimNumber(
  workspaceId: string,
  claim: { number: string; by: string; at: Date; lookUp: (number: string) => Promise<PoolNumber | null> },
): Promise<{ record: ClaimedNumber; created: boolean }> {
  const existing = await heldBy(workspaceId, claim.number);
  if (existing) return { record: existing, created: false };
  const offered = await claim.lookUp(claim.number);
  if (!offered) throw new NumberNotInPoolError(claim.number);
  const _id = newId();
  const record: ClaimedNumber = {
    _id,
    number: claim.number,
    workspace_id: workspaceId,
    agent_id: null,
    region: offered.region,
    number_type: offered.numberType,
    claimed_at: claim.at,
    claimed_by: claim.by,
    connected_at: null,
  };
  try {
    await PhoneNumber.create({ ...record, connection_key: freeConnectionKey(_id) });
    return { record, created: true };
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    const winner = await heldBy(workspaceId, claim.number);
    if (!winner) throw err; // claimed and released again in between: let the caller retry
    return { record: winner, created: false };
  }
}

/** The workspace's record of the number, null when nobody holds it; NumberTakenError when another workspace does. */
async function heldBy(workspaceId: string, number: string): Promise<ClaimedNumber | null> {
  const record = await PhoneNumber.findOne({ number }, { connection_key: 0 }).lean<ClaimedNumber>();
  if (record && record.workspace_id !== workspaceId) throw new NumberTakenError(number);
  return record;
}

/** Which of these numbers any workspace holds. */
export async function heldNumbers(numbers: string[]): Promise<Set<string>> {
  if (!numbers.length) return new Set();
  const held = await PhoneNumber.find({ number: { $in: numbers } }, { number: 1 }).lean();
  return new Set(held.map((r) => r.number));
}

/** The workspace's numbers, oldest claim first. */
export async function numbersOfWorkspace(workspaceId: string): Promise<ClaimedNumber[]> {
  return PhoneNumber.find({ workspace_id: workspaceId }, { connection_key: 0 }).sort({ claimed_at: 1, _id: 1 }).lean<ClaimedNumber[]>();
}

/** One of the workspace's numbers, or null (also for another workspace's number). */
export async function numberOfWorkspace(workspaceId: string, number: string): Promise<ClaimedNumber | null> {
  return PhoneNumber.findOne({ number, workspace_id: workspaceId }, { connection_key: 0 }).lean<ClaimedNumber>();
}

/**
 * Gives the number back to the pool: the record goes first (the truth), then its agent's
 * `phone_number`. Answers the released record, null when the workspace does not hold it.
 */
export async function releaseNumber(workspaceId: string, number: string): Promise<ClaimedNumber | null> {
  const record = await PhoneNumber.findOneAndDelete({ number, workspace_id: workspaceId }).lean<ClaimedNumber>();
  if (record?.agent_id) await syncAgentNumber(workspaceId, record.agent_id);
  return record;
}

/**
 * Connects the number to the agent (null: disconnects whatever number the agent has). The
 * agent's previous number is disconnected (an agent answers one number); a number connected
 * to another agent of the workspace moves to this one, and that agent loses it. Sets
 * `Agent.phone_number` of both agents accordingly. The caller checks that the agent is the
 * workspace's.
 */
export async function assignNumberToAgent(workspaceId: string, agentId: string, number: string | null): Promise<void> {
  if (number === null) {
    await disconnectAgent(workspaceId, agentId);
    await syncAgentNumber(workspaceId, agentId);
    return;
  }
  const record = await heldBy(workspaceId, number);
  if (!record) throw new NumberNotInWorkspaceError(number);
  if (record.agent_id !== agentId) {
    await connect(workspaceId, agentId, number);
    if (record.agent_id) await syncAgentNumber(workspaceId, record.agent_id);
  }
  await syncAgentNumber(workspaceId, agentId);
}

/** Disconnects the agent's number, which stays in the workspace (for an agent being deleted). */
export async function releaseNumbersOfAgent(workspaceId: string, agentId: string): Promise<void> {
  await disconnectAgent(workspaceId, agentId);
  await syncAgentNumber(workspaceId, agentId);
}

/** How often a connect retries after a concurrent connect gave the agent another number. */
const CONNECT_ATTEMPTS = 3;

async function connect(workspaceId: string, agentId: string, number: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await disconnectAgent(workspaceId, agentId, number);
    try {
      const connected = await PhoneNumber.findOneAndUpdate(
        { number, workspace_id: workspaceId },
        { $set: { agent_id: agentId, connection_key: agentId, connected_at: new Date() } },
      ).lean();
      if (!connected) throw new NumberNotInWorkspaceError(number); // released in the meantime
      return;
    } catch (err) {
      if (!isDuplicateKeyError(err) || attempt >= CONNECT_ATTEMPTS) throw err;
    }
  }
}

/** Frees the number the agent holds (other than `except`). */
async function disconnectAgent(workspaceId: string, agentId: string, except?: string): Promise<void> {
  const held = await PhoneNumber.find({ workspace_id: workspaceId, agent_id: agentId }, { _id: 1, number: 1 }).lean();
  for (const record of held.filter((r) => r.number !== except)) {
    await PhoneNumber.updateOne(
      { _id: record._id, agent_id: agentId },
      { $set: { agent_id: null, connection_key: freeConnectionKey(record._id), connected_at: null } },
    );
  }
}

/** Writes the agent's `phone_number` from the number records (no-op for a deleted agent). */
async function syncAgentNumber(workspaceId: string, agentId: string): Promise<void> {
  const record = await PhoneNumber.findOne({ workspace_id: workspaceId, agent_id: agentId }, { number: 1 }).lean();
  const number = record?.number ?? null;
  await Agent.updateOne({ _id: agentId, workspace_id: workspaceId, phone_number: { $ne: number } }, { $set: { phone_number: number } });
}

/**
 * Puts the derived side right after a crash between the two writes of a change: numbers
 * connected to an agent that no longer exists are disconnected, and every agent's
 * `phone_number` is set from the records.
 */
export async function repairAgentNumbers(workspaceId: string): Promise<void> {
  const [records, agents] = await Promise.all([
    PhoneNumber.find({ workspace_id: workspaceId }, { _id: 1, number: 1, agent_id: 1 }).lean(),
    Agent.find({ workspace_id: workspaceId }, { _id: 1, phone_number: 1 }).lean<{ _id: string; phone_number: string | null }[]>(),
  ]);
  const agentIds = new Set(agents.map((a) => a._id));
  for (const orphan of records.filter((r) => r.agent_id && !agentIds.has(r.agent_id))) {
    if (await Agent.exists({ _id: orphan.agent_id })) continue; // created after the read above
    await PhoneNumber.updateOne(
      { _id: orphan._id, agent_id: orphan.agent_id },
      { $set: { agent_id: null, connection_key: freeConnectionKey(orphan._id), connected_at: null } },
    );
  }
  const numberOf = new Map(records.filter((r) => r.agent_id && agentIds.has(r.agent_id)).map((r) => [r.agent_id as string, r.number]));
  for (const agent of agents) {
    const expected = numberOf.get(agent._id) ?? null;
    if ((agent.phone_number ?? null) !== expected) await syncAgentNumber(workspaceId, agent._id);
  }
}
