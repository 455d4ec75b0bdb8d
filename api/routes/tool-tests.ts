import { Router } from 'express';
import { Agent, toolOf, type StoredAgent } from '../../db/models/agent';
import { runHttpTool } from '../../providers/http-tools/http-tool';
import { workspaceAccessOf } from '../auth/context';
import { HttpError, validationFailed } from '../../domain/shared/http-error';
import { maskedHeaderIssues } from '../../domain/agents/tool-headers';
import type { operations } from '../../schemas/api-types';
import { apiRouter } from './router';

type AgentToolTest = operations['testAgentTool']['requestBody']['content']['application/json'];
type ToolTest = operations['testTool']['requestBody']['content']['application/json'];

export interface ToolTestDeps {
  /** TOOLS_ALLOW_PRIVATE_NETWORKS: whether tools may reach private, loopback and link-local targets. */
  allowPrivateNetworks: boolean;
}

/**
 * Testing HTTP tools: one request through the same executor a call uses, answered 200 with
 * its outcome whatever the target said (the test ran; the outcome is the answer).
 */
export function toolTestRoutes(deps: ToolTestDeps): Router {
  const router = apiRouter();

  router.post('/agents/:agent_id/tools/:tool_name/test', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const agent = await Agent.findOne({ _id: req.params.agent_id, workspace_id: workspace.id }, { tools: 1 }).lean<Pick<StoredAgent, 'tools'>>();
    if (!agent) throw new HttpError(404, 'agent not found');
    const stored = agent.tools.find((tool) => tool.name === req.params.tool_name);
    if (!stored) throw new HttpError(404, 'tool not found');
    const { arguments: args = {} } = req.body as AgentToolTest;
    res.json(await runHttpTool(toolOf(stored), args, deps));
  });

  router.post('/tools/test', async (req, res) => {
    const { tool, arguments: args = {} } = req.body as ToolTest;
    // A tool given here carries no saved values: a header copied masked from an agent's answer
    // would be sent as the mask. Its saved form is tested at /agents/{id}/tools/{name}/test.
    const issues = maskedHeaderIssues(
      { name: tool.name, headers: tool.headers ?? {} },
      ['body', 'tool'],
      'send the value, or test the saved tool at POST /agents/{agent_id}/tools/{tool_name}/test',
    );
    if (issues.length) throw validationFailed(issues);
    res.json(await runHttpTool(tool, args, deps));
  });

  return router;
}
