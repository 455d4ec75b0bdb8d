import { toolHeaderNames, toolOf, type AgentTool, type StoredAgentTool } from '../../db/models/agent';
import type { ValidationIssue } from '../shared/validation-issues';

/**
 * Tools' header values are write-only (docs/decisions/0195): answers show each header's name
 * with this mask, never its value. U+2022 cannot appear in a real HTTP header value (not a
 * Latin-1 byte), so a mask sent back is never mistaken for a value.
 */
export const MASKED_HEADER_VALUE = '••••••';

/** The headers as answers show them: every name, every value masked. */
export function maskedHeaders(stored: StoredAgentTool): Record<string, string> {
  return Object.fromEntries(toolHeaderNames(stored).map((name) => [name, MASKED_HEADER_VALUE]));
}

/**
 * The tools an update saves: a header sent back masked keeps the value the saved tool of the
 * same name has; a new value replaces it; a header left out is gone. A masked header with no
 * saved value to keep (a new tool or header, a renamed tool) is an issue: its value must be sent.
 */
export function withKeptHeaderValues(tools: AgentTool[], saved: StoredAgentTool[]): { tools: AgentTool[]; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const savedByName = new Map(saved.map((tool) => [tool.name, tool]));
  const kept = tools.map((tool, index) => {
    const masked = Object.keys(tool.headers).filter((name) => tool.headers[name] === MASKED_HEADER_VALUE);
    if (!masked.length) return tool;
    const savedTool = savedByName.get(tool.name);
    const savedHeaders = savedTool ? toolOf(savedTool).headers : {};
    const headers = { ...tool.headers };
    for (const name of masked) {
      const value = savedHeaders[name];
      if (value === undefined) issues.push(maskedWithoutValue(['body', 'tools', index], tool.name, name));
      else headers[name] = value;
    }
    return { ...tool, headers };
  });
  return { tools: kept, issues };
}

/** A tool with no saved values to keep (a new agent's, a tool test's): each masked header is an issue; `loc` is the tool's. */
export function maskedHeaderIssues(tool: Pick<AgentTool, 'name' | 'headers'>, loc: (string | number)[], advice = SEND_THE_VALUE): ValidationIssue[] {
  return Object.keys(tool.headers)
    .filter((name) => tool.headers[name] === MASKED_HEADER_VALUE)
    .map((name) => maskedWithoutValue(loc, tool.name, name, advice));
}

const SEND_THE_VALUE = 'send the value';

function maskedWithoutValue(toolLoc: (string | number)[], toolName: string, header: string, advice = SEND_THE_VALUE): ValidationIssue {
  return {
    type: 'value_error',
    loc: [...toolLoc, 'headers', header],
    msg: `header "${header}" of tool "${toolName}" is the mask ${MASKED_HEADER_VALUE}, but no saved tool of that name has a value for it to keep; ${advice}`,
    input: MASKED_HEADER_VALUE,
  };
}
