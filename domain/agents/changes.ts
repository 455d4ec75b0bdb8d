import type { AgentSettings, StoredAgent } from '../../db/models/agent';
import { planOf } from '../billing/plans';
import { actorFor, type Caller, type WorkspaceAccess } from '../accounts/principal';
import { validationFailed } from '../shared/http-error';
import type { ValidationIssue } from '../shared/validation-issues';
import { assignPhoneNumber, checkMayChangeNumber, unknownKnowledgeBaseIssues } from './links';
import { settingsIssues } from './rules';
import { settingsFromInput, type AgentInput } from './settings';
import { maskedHeaderIssues, withKeptHeaderValues } from './tool-headers';
import { createAgent, deleteAgent, findAgent, saveNewVersion } from './store';
import { unknownVoiceIssues, type VoiceList } from './voice';

/**
 * Creating and changing an agent: the rules behind POST /agents and PUT /agents/{id}, and
 * behind the MCP tools `create_agent` and `update_agent`. The input has passed the
 * `AgentInput` schema already.
 */
export async function createAgentAs(caller: Caller, input: AgentInput, now: Date, voices: VoiceList): Promise<StoredAgent> {
  const { access } = caller;
  const settings = settingsFromInput(input, null);
  if (settings.phone_number !== null) checkMayChangeNumber(caller.principal, access);
  // Nothing saved to keep: a masked header value (copied from another agent's answer) is refused.
  await checkSettings(
    access,
    settings,
    voices,
    settings.tools.flatMap((tool, index) => maskedHeaderIssues(tool, ['body', 'tools', index])),
  );
  const agent = await createAgent(access.workspace.id, settings, savedBy(caller), now, planOf(access.workspace.plan).maxAgents);
  if (settings.phone_number !== null) await connectNumberOrWithdraw(agent, settings.phone_number);
  return agent;
}

/**
 * Replaces the agent's settings (a new version); `phone_number` left out keeps the current one,
 * a tool's header sent back masked keeps its saved value (docs/decisions/0195).
 */
export async function updateAgentAs(caller: Caller, agentId: string, input: AgentInput, now: Date, voices: VoiceList): Promise<StoredAgent> {
  const { access } = caller;
  const current = await findAgent(access.workspace.id, agentId);
  const asSent = settingsFromInput(input, current.phone_number);
  const { tools, issues } = withKeptHeaderValues(asSent.tools, current.tools);
  const settings = { ...asSent, tools };
  const numberChanges = settings.phone_number !== current.phone_number;
  if (numberChanges) checkMayChangeNumber(caller.principal, access);
  await checkSettings(access, settings, voices, issues);
  if (numberChanges) await assignPhoneNumber(access.workspace.id, current._id, settings.phone_number);
  return saveNewVersion(current, settings, savedBy(caller), now);
}

/** `updated_by`: the person's name, or `key:<name>` for an API key. */
export function savedBy(caller: Caller): string {
  return actorFor(caller.principal).name ?? 'unknown';
}

/**
 * The rules a JSON schema cannot state: the plan's providers, the workspace's knowledge bases,
 * a voice of the speech-synthesis service (502 when it cannot be asked).
 */
export async function settingsProblems(access: WorkspaceAccess, settings: AgentSettings, voices: VoiceList): Promise<ValidationIssue[]> {
  const [knowledgeBases, voice] = await Promise.all([
    unknownKnowledgeBaseIssues(access.workspace.id, settings.knowledge_base_ids),
    unknownVoiceIssues(voices, settings),
  ]);
  return [...settingsIssues(settings, access.workspace.plan), ...knowledgeBases, ...voice];
}

async function checkSettings(access: WorkspaceAccess, settings: AgentSettings, voices: VoiceList, headerIssues: ValidationIssue[]): Promise<void> {
  const issues = [...headerIssues, ...(await settingsProblems(access, settings, voices))];
  if (issues.length) throw validationFailed(issues);
}

/** A new agent whose number cannot be connected is withdrawn, so the request changes nothing. */
async function connectNumberOrWithdraw(agent: StoredAgent, number: string): Promise<void> {
  try {
    await assignPhoneNumber(agent.workspace_id, agent._id, number);
  } catch (err) {
    await deleteAgent(agent);
    throw err;
  }
}
