import { CATALOG, llmProvider, llmProvidersAllowed, ttsProvider } from './catalog';
import type { AgentSettings } from '../../db/models/agent';
import { canonicalTimeZone } from '../shared/time';
import { webhookUrlProblem } from '../webhooks/endpoint-rules';
import type { ValidationIssue } from '../shared/validation-issues';
import { toolParametersProblem } from './tool-parameters';

/** The name of the built-in tool that ends the call. */
export const BUILT_IN_TOOL = 'end_call';

/** Names of the built-in tools, which custom tools may not take (issue 20 adds `press_digits` and `transfer_call`). */
export const BUILT_IN_TOOLS: readonly string[] = [BUILT_IN_TOOL, 'press_digits', 'transfer_call'];

/**
 * The rules of an agent's settings that the OpenAPI schema cannot state: the catalog's
 * providers and models, the plan's language-model providers, the calling hours, a real time
 * zone, unique tool names and extraction keys, valid tool parameter schemas, and the
 * webhook URL's rules. Locations
 * are those of the request body.
 */
export function settingsIssues(settings: AgentSettings, plan: string): ValidationIssue[] {
  return [...modelIssues(settings, plan), ...callIssues(settings), ...toolIssues(settings), ...extractionIssues(settings), ...webhookUrlIssues(settings)];
}

function issue(loc: (string | number)[], msg: string, input: unknown): ValidationIssue {
  return { type: 'value_error', loc: ['body', ...loc], msg, input };
}

function modelIssues({ llm, voice }: AgentSettings, plan: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const llmEntry = llmProvider(llm.provider);
  const allowed = llmProvidersAllowed(plan);
  if (!llmEntry) {
    issues.push(
      issue(['llm', 'provider'], `unknown language-model provider; the catalog has ${CATALOG.llmProviders.map((p) => p.id).join(', ')}`, llm.provider),
    );
  } else if (!allowed.includes(llm.provider)) {
    issues.push(
      issue(
        ['llm', 'provider'],
        `the workspace's plan (${plan}) may not use the language-model provider ${llm.provider}; it may use ${allowed.join(', ')}`,
        llm.provider,
      ),
    );
  } else if (!llmEntry.models.some((m) => m.id === llm.model)) {
    issues.push(issue(['llm', 'model'], `not a model of ${llm.provider}; its models are ${llmEntry.models.map((m) => m.id).join(', ')}`, llm.model));
  }
  const ttsEntry = ttsProvider(voice.provider);
  if (!ttsEntry) {
    issues.push(
      issue(['voice', 'provider'], `unknown speech-synthesis provider; the catalog has ${CATALOG.ttsProviders.map((p) => p.id).join(', ')}`, voice.provider),
    );
  } else if (!ttsEntry.models.some((m) => m.id === voice.model)) {
    issues.push(issue(['voice', 'model'], `not a model of ${voice.provider}; its models are ${ttsEntry.models.map((m) => m.id).join(', ')}`, voice.model));
  }
  return issues;
}

/** The agent's `webhook_url` follows the rules of a workspace endpoint's URL (one rule set). */
function webhookUrlIssues({ webhook_url }: AgentSettings): ValidationIssue[] {
  const problem = webhook_url ? webhookUrlProblem(webhook_url) : null;
  return problem ? [issue(['webhook_url'], problem, webhook_url)] : [];
}

function callIssues({ call }: AgentSettings): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (call.call_start_hour >= call.call_end_hour) {
    issues.push(issue(['call', 'call_start_hour'], `must be before call_end_hour (${call.call_end_hour})`, call.call_start_hour));
  }
  if (!canonicalTimeZone(call.timezone)) {
    issues.push(issue(['call', 'timezone'], 'unknown time zone; use an IANA name such as Asia/Kolkata or Europe/London', call.timezone));
  }
  // Leaving a message needs one (docs/decisions/0158); the schema states the length and the actions.
  if (call.voicemail.action === 'leave_message' && call.voicemail.message.trim() === '') {
    issues.push(issue(['call', 'voicemail', 'message'], 'required when action is leave_message: the message left after the beep', call.voicemail.message));
  }
  issues.push(...transferIssues(call.transfer));
  return issues;
}

/** `call.transfer` (docs/decisions/0160): E.164 numbers, each once; the schema states the count, lengths and modes. */
function transferIssues(transfer: AgentSettings['call']['transfer']): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  transfer.destinations.forEach((destination, i) => {
    if (!E164.test(destination.number))
      issues.push(issue(['call', 'transfer', 'destinations', i, 'number'], 'must be an E.164 number such as +919812345678', destination.number));
    else if (seen.has(destination.number))
      issues.push(issue(['call', 'transfer', 'destinations', i, 'number'], 'another destination has this number; numbers must be unique', destination.number));
    seen.add(destination.number);
  });
  return issues;
}

const E164 = /^\+[1-9]\d{7,14}$/;

function toolIssues({ tools }: AgentSettings): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  tools.forEach((tool, i) => {
    if (BUILT_IN_TOOLS.includes(tool.name)) issues.push(issue(['tools', i, 'name'], `${tool.name} is the name of a built-in tool`, tool.name));
    else if (seen.has(tool.name)) issues.push(issue(['tools', i, 'name'], 'another tool of the agent has this name; names must be unique', tool.name));
    seen.add(tool.name);
    const problem = toolParametersProblem(tool.parameters);
    if (problem) issues.push(issue(['tools', i, 'parameters'], problem, tool.parameters));
  });
  return issues;
}

function extractionIssues({ analytics }: AgentSettings): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  analytics.extractions.forEach((item, i) => {
    if (seen.has(item.key)) issues.push(issue(['analytics', 'extractions', i, 'key'], 'another extraction has this key; keys must be unique', item.key));
    seen.add(item.key);
  });
  return issues;
}
