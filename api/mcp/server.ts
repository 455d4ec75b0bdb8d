import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { authorizeInWorkspace } from '../middleware/access';
import type { Caller } from '../auth/context';
import type { Logger } from '../../domain/shared/logger';
import { domainErrorAnswer } from '../middleware/errors';
import { openApiDocument } from '../openapi-document';
import { OperationIndex, type AccessRule } from '../operation-index';
import { renderDates } from '../../domain/shared/time';
import { operationInputSchema } from './operation-schemas';
import { MCP_TOOLS, type McpTool, type ToolDeps } from './tools';

const SERVER_INFO = { name: 'voice-agent-service', version: '1.0.0' };

interface PreparedTool {
  tool: McpTool;
  input: z.ZodType;
  rules: AccessRule[];
}

let prepared: PreparedTool[] | undefined;

/** Each tool with its input schema and the access rules of what it mirrors, built once per process. */
function preparedTools(): PreparedTool[] {
  if (prepared) return prepared;
  const operations = new Map(new OperationIndex(openApiDocument()).all().map((op) => [op.operationId, op]));
  prepared = MCP_TOOLS.map((tool) => ({
    tool,
    input: operationInputSchema(tool.mirrors[0]),
    rules: tool.mirrors.map((id) => {
      const operation = operations.get(id);
      if (!operation) throw new Error(`MCP tool ${tool.name} mirrors ${id}, which schemas/openapi.yaml does not have`);
      return operation.access;
    }),
  }));
  return prepared;
}

export interface RequestScope {
  /** The zone dates are rendered in: `X-Timezone`, else the service's default (as at /api/v1). */
  timezone: string;
  requestId: string;
  logger: Logger;
}

/**
 * The MCP server of one request, for one caller (stateless: every POST brings its credential
 * and gets a fresh server). A tool first passes the `x-access` rule of each HTTP operation it
 * mirrors, exactly as the request would at /api/v1; an HttpError becomes a tool error that
 * carries the status and body the HTTP API would answer.
 */
export function mcpServerFor(caller: Caller, deps: ToolDeps & RequestScope): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
  for (const { tool, input, rules } of preparedTools()) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: input, annotations: tool.annotations },
      async (args: unknown) => {
        try {
          for (const rule of rules) authorizeInWorkspace(rule, caller.principal, caller.access);
          const result = await tool.run(args as Record<string, unknown>, caller, deps);
          return jsonResult(renderDates(result, deps.timezone), false);
        } catch (error) {
          const known = domainErrorAnswer(error);
          if (known) return jsonResult({ status: known.status, ...known.body }, true);
          // As the HTTP API: logged here, and answered without internals.
          deps.logger.error({ request_id: deps.requestId, method: 'MCP', path: `tools/${tool.name}`, error: String((error as Error)?.stack ?? error) });
          return jsonResult({ status: 500, detail: 'internal server error', request_id: deps.requestId }, true);
        }
      },
    );
  }
  return server;
}

function jsonResult(value: unknown, isError: boolean): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], ...(isError ? { isError: true } : {}) };
}
