import { Router, type Response } from 'express';
import type { Client } from '@temporalio/client';
import { cancelQueuedCallsOf } from '../../domain/calls/agent-deleted';
import type { AgentSettings } from '../../db/models/agent';
import { planOf } from '../../domain/billing/plans';
import { createAgentAs, savedBy as savedByCaller, settingsProblems, updateAgentAs } from '../../domain/agents/changes';
import { releasePhoneNumbers } from '../../domain/agents/links';
import type { AgentInput } from '../../domain/agents/settings';
import { createAgent, deleteAgent, findAgent, findVersion, keptVersions, listAgents, saveNewVersion } from '../../domain/agents/store';
import { agentView, settingsFromStored, versionView } from '../../domain/agents/views';
import type { VoiceList } from '../../domain/agents/voice';
import { callerOf, workspaceAccessOf, type WorkspaceAccess } from '../auth/context';
import type { AuthDeps } from '../auth/deps';
import { validationFailed } from '../../domain/shared/http-error';
import { apiRouter } from './router';

/** The nine Agents endpoints: agents, their kept versions, duplicate and restore. */
export function agentRoutes(deps: Pick<AuthDeps, 'now'> & { temporal: Client; synthesizer: VoiceList }): Router {
  const router = apiRouter();

  router.get('/agents', async (_req, res) => {
    const { workspace } = workspaceAccessOf(res);
    res.json((await listAgents(workspace.id)).map(agentView));
  });

  router.post('/agents', async (req, res) => {
    res.status(201).json(agentView(await createAgentAs(callerOf(res), req.body as AgentInput, deps.now(), deps.synthesizer)));
  });

  router.get('/agents/:agent_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    res.json(agentView(await findAgent(workspace.id, req.params.agent_id)));
  });

  router.put('/agents/:agent_id', async (req, res) => {
    res.json(agentView(await updateAgentAs(callerOf(res), req.params.agent_id, req.body as AgentInput, deps.now(), deps.synthesizer)));
  });

  router.delete('/agents/:agent_id', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const agent = await findAgent(workspace.id, req.params.agent_id);
    await releasePhoneNumbers(workspace.id, agent._id);
    await deleteAgent(agent);
    // Its queued calls end now (`agent deleted`); a call that misses this signal finds the agent gone at the front.
    await cancelQueuedCallsOf(deps.temporal, workspace.id, agent._id);
    res.status(204).end();
  });

  router.post('/agents/:agent_id/duplicate', async (req, res) => {
    const access = workspaceAccessOf(res);
    const original = await findAgent(access.workspace.id, req.params.agent_id);
    // A number answers one agent, so the copy has none.
    const settings = { ...settingsFromStored(original), name: copyName(original.name), phone_number: null };
    await checkStoredSettings(access, settings, deps.synthesizer, ['path', 'agent_id'], original._id, 'the agent cannot be copied');
    const copy = await createAgent(access.workspace.id, settings, savedBy(res), deps.now(), planOf(access.workspace.plan).maxAgents);
    res.status(201).json(agentView(copy));
  });

  router.get('/agents/:agent_id/versions', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const agent = await findAgent(workspace.id, req.params.agent_id);
    res.json((await keptVersions(agent)).map((version) => versionView(agent, version)));
  });

  router.get('/agents/:agent_id/versions/:version', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const agent = await findAgent(workspace.id, req.params.agent_id);
    res.json(versionView(agent, await findVersion(agent, Number(req.params.version))));
  });

  router.post('/agents/:agent_id/versions/:version/restore', async (req, res) => {
    const access = workspaceAccessOf(res);
    const current = await findAgent(access.workspace.id, req.params.agent_id);
    const version = await findVersion(current, Number(req.params.version));
    // Numbers are connected with numbers.manage, so a restore keeps the agent's current one.
    const settings = { ...settingsFromStored(version.settings), phone_number: current.phone_number };
    await checkStoredSettings(access, settings, deps.synthesizer, ['path', 'version'], version.version, `version ${version.version} cannot be restored`);
    res.json(agentView(await saveNewVersion(current, settings, savedBy(res), deps.now())));
  });

  return router;
}

/** `updated_by`: the person's name, or `key:<name>` for an API key. */
function savedBy(res: Response): string {
  return savedByCaller(callerOf(res));
}

/**
 * Settings saved earlier (a version to restore, an agent to copy) may break a rule today: the
 * plan changed, a knowledge base was deleted, the speech service dropped the voice. The request has no body, so each problem is
 * reported at the path parameter, naming the setting.
 */
async function checkStoredSettings(
  access: WorkspaceAccess,
  settings: AgentSettings,
  voices: VoiceList,
  loc: [string, string],
  input: unknown,
  what: string,
): Promise<void> {
  const issues = await settingsProblems(access, settings, voices);
  if (issues.length) throw validationFailed(issues.map((i) => ({ type: i.type, loc, msg: `${what}: ${i.loc.slice(1).join('.')} ${i.msg}`, input })));
}

const COPY_SUFFIX = ' (copy)';
const MAX_NAME = 120;

/** `<name> (copy)`, the name cut (by characters) so the whole stays within 120. */
export function copyName(name: string): string {
  return [...name].slice(0, MAX_NAME - COPY_SUFFIX.length).join('') + COPY_SUFFIX;
}
