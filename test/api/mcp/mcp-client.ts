import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningApi } from '../../support/api';

/** A tool's answer: the JSON it carries, and whether it is a tool error. */
export interface ToolAnswer {
  isError: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface McpSession {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<ToolAnswer>;
  close(): Promise<void>;
}

/** The SDK's own client over Streamable HTTP, sending `Authorization: Bearer <token>` on every request. */
export async function connectMcp(api: RunningApi, token: string): Promise<McpSession> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return {
    client,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      const content = result.content as { type: string; text: string }[];
      if (content.length !== 1 || content[0].type !== 'text') throw new Error(`${name}: expected one text item, got ${JSON.stringify(result)}`);
      let body: unknown;
      try {
        body = JSON.parse(content[0].text);
      } catch {
        body = content[0].text; // the SDK's own errors (input validation) are plain text
      }
      return { isError: result.isError === true, body };
    },
    close: () => client.close(),
  };
}
