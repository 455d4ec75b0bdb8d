import { isDuplicateKeyError } from '../../db/errors';
import { newId } from '../../db/ids';
import { Agent, storedTool, type AgentSettings, type StoredAgent, type StoredAgentSettings } from '../../db/models/agent';
import { AgentVersion, agentVersionId, type StoredAgentVersion } from '../../db/models/agent-version';
import { HttpError } from '../shared/http-error';
import { templateVariables } from './variables';

/** The contract's "Agent versions kept": 10 per agent. */
export const KEPT_VERSIONS = 10;

export const agentNotFound = () => new HttpError(404, 'agent not found');

export function storedSettings(settings: AgentSettings): StoredAgentSettings {
  return { ...settings, tools: settings.tools.map(storedTool), variables: templateVariables(settings.welcome_message, settings.system_prompt) };
}

/** The workspace's agent, or 404 (another workspace's agent is not found either). */
export async function findAgent(workspaceId: string, agentId: string): Promise<StoredAgent> {
  // By `_id` alone: the one filter FerretDB hands down to SQLite (others make it decode every
  // document of the collection); the workspace is checked here.
  const agent = await Agent.findById(agentId).lean<StoredAgent>();
  if (!agent || agent.workspace_id !== workspaceId) throw agentNotFound();
  return agent;
}

export async function listAgents(workspaceId: string): Promise<StoredAgent[]> {
  return Agent.find({ workspace_id: workspaceId }).sort({ created_at: -1, _id: -1 }).lean<StoredAgent[]>();
}

/**
 * Creates an agent at version 1 within the plan's agent limit (`null`: none). Without
 * transactions two creates can race past a count taken before inserting, so the count is
 * taken again afterwards and the newcomer withdraws if the workspace went over.
 */
export async function createAgent(workspaceId: string, settings: AgentSettings, by: string, now: Date, maxAgents: number | null): Promise<StoredAgent> {
  const overLimit = (count: number) => maxAgents !== null && count > maxAgents;
  if (overLimit((await Agent.countDocuments({ workspace_id: workspaceId })) + 1)) throw agentLimitReached(maxAgents);
  const agent: StoredAgent = {
    _id: newId(),
    workspace_id: workspaceId,
    ...storedSettings(settings),
    version: 1,
    updated_by: by,
    created_at: now,
    updated_at: now,
  };
  await Agent.create(agent);
  if (overLimit(await Agent.countDocuments({ workspace_id: workspaceId }))) {
    await Agent.deleteOne({ _id: agent._id });
    throw agentLimitReached(maxAgents);
  }
  await recordVersion(agent);
  return agent;
}

function agentLimitReached(maxAgents: number | null): HttpError {
  return new HttpError(409, `the workspace's plan allows ${maxAgents} agents; delete one or move to a larger plan`);
}

/**
 * Saves new settings as the next version of `current`. Of two saves from the same version
 * only one may win, and FerretDB applies a filtered update as a read, modify, write that two
 * writers can both pass (a guard on `version` lets both through); so the number is claimed
 * first by inserting its version record, whose `_id` (`<agent>:<version>`) is unique, and only
 * the winner writes the agent. The loser gets 409 rather than silently overwriting the
 * winner. Then the version that fell out of the newest 10 is dropped.
 */
export async function saveNewVersion(current: StoredAgent, settings: AgentSettings, by: string, now: Date): Promise<StoredAgent> {
  const version = current.version + 1;
  const update = { ...storedSettings(settings), version, updated_by: by, updated_at: now };
  const record = {
    _id: agentVersionId(current._id, version),
    agent_id: current._id,
    workspace_id: current.workspace_id,
    version,
    settings: settingsOf({ ...current, ...update }),
    updated_by: by,
    updated_at: now,
  };
  await claimVersion(record);
  // The claim alone decides (a filter on `version` would add nothing and, on FerretDB, turn a
  // filtered update into a much slower find-and-modify).
  const { matchedCount } = await Agent.updateOne({ _id: current._id }, { $set: update });
  if (!matchedCount) {
    await AgentVersion.deleteOne({ _id: record._id });
    throw agentNotFound();
  }
  if (version > KEPT_VERSIONS) await AgentVersion.deleteOne({ _id: agentVersionId(current._id, version - KEPT_VERSIONS) });
  return { ...current, ...update };
}

/** How old an unfinished claim must be before it counts as abandoned (its save crashed). */
const ABANDONED_CLAIM_MS = 60_000;

async function claimVersion(record: StoredAgentVersion): Promise<void> {
  try {
    await AgentVersion.create(record);
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    // A claim whose agent never moved on is left over from a save that died in between;
    // without this the agent could never be saved again.
    const held = await AgentVersion.findById(record._id).lean<StoredAgentVersion>();
    if (!held || record.updated_at.getTime() - held.updated_at.getTime() < ABANDONED_CLAIM_MS) throw changedMeanwhile();
    await AgentVersion.deleteOne({ _id: record._id, updated_at: held.updated_at });
    await claimVersion(record);
  }
}

function changedMeanwhile(): HttpError {
  return new HttpError(409, 'the agent was changed at the same time; load it again and retry');
}

async function recordVersion(agent: StoredAgent): Promise<void> {
  const { _id, workspace_id, version, updated_by, updated_at } = agent;
  await AgentVersion.create({ _id: agentVersionId(_id, version), agent_id: _id, workspace_id, version, settings: settingsOf(agent), updated_by, updated_at });
}

/** The settings part of a stored agent (what a version keeps). */
export function settingsOf(agent: StoredAgent): StoredAgentSettings {
  const { _id, workspace_id: _workspace, version: _version, updated_by: _by, created_at: _created, updated_at: _updated, ...settings } = agent;
  return settings;
}

/** The kept versions, newest first. Records left by an interrupted save or cleanup stay hidden. */
export async function keptVersions(agent: StoredAgent): Promise<StoredAgentVersion[]> {
  const versions = await AgentVersion.find({ agent_id: agent._id }).sort({ version: -1 }).lean<StoredAgentVersion[]>();
  return versions.filter((v) => isKept(agent, v.version));
}

export async function findVersion(agent: StoredAgent, version: number): Promise<StoredAgentVersion> {
  const found = isKept(agent, version) ? await AgentVersion.findById(agentVersionId(agent._id, version)).lean<StoredAgentVersion>() : null;
  if (!found) throw new HttpError(404, 'version not found');
  return found;
}

function isKept(agent: StoredAgent, version: number): boolean {
  return version <= agent.version && version > agent.version - KEPT_VERSIONS;
}

/** Removes the agent and its versions; 404 when it is already gone. */
export async function deleteAgent(agent: StoredAgent): Promise<void> {
  const { deletedCount } = await Agent.deleteOne({ _id: agent._id });
  if (!deletedCount) throw agentNotFound();
  await AgentVersion.deleteMany({ agent_id: agent._id });
}
