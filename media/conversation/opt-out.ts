import type { AgentSettings } from '../../db/models/agent';
import type { LlmTool } from '../../providers/llm/types';

/**
 * The built-in `add_to_do_not_call` tool (docs/decisions/0206): a caller who asks not to be
 * called again is put on the workspace's do-not-call list, hears a confirmation, and the call
 * ends. The model decides when the caller asked; ./tool-calls.ts runs the tool
 * through its `optOut` dependency.
 */

export const OPT_OUT_TOOL_NAME = 'add_to_do_not_call';
/** The call's `hangup_reason` after an opt-out. */
export const OPTED_OUT_REASON = 'opted out';

export const OPT_OUT_TOOL: LlmTool = {
  name: OPT_OUT_TOOL_NAME,
  description:
    "Put the caller's number on the do-not-call list, then the call ends. Use it only when the caller asks not to be called again " +
    '(for example "don\'t call me", "remove my number", "stop calling me", "मुझे फ़ोन मत करना"). Do not use it for a caller who is only busy now.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
};

/** Said after an opt-out when the agent has no `opt_out_message`: in Hindi for Hindi agents, else in English. */
const DEFAULT_MESSAGES: Record<string, string> = {
  hi: 'ठीक है, हमने आपका नंबर हटा दिया है। अब आपको हमारी ओर से कॉल नहीं आएगा। धन्यवाद।',
  en: 'Understood. Your number has been removed and we will not call you again. Goodbye.',
};

/** Whether the agent offers the tool (`call.opt_out`; agents saved before it existed: off). */
export function optsOut(call: AgentSettings['call']): boolean {
  return (call as Partial<AgentSettings['call']>).opt_out === true;
}

/** The confirmation the caller hears: the agent's `opt_out_message`, else the default for its language. */
export function optOutMessageOf(call: AgentSettings['call'], language: string): string {
  const own = ((call as Partial<AgentSettings['call']>).opt_out_message ?? '').trim();
  if (own) return own;
  return DEFAULT_MESSAGES[language.toLowerCase().split('-')[0]!] ?? DEFAULT_MESSAGES.en!;
}
