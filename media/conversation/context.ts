import type { AgentSpeech } from './speech';
import type { ConversationState } from './state';
import type { ConversationDeps, ConversationOptions } from './types';

/** What the turn loop (./engine.ts) hands its collaborators: the call's settings and services, the shared state, the agent's voice. */
export interface ConversationContext {
  readonly options: ConversationOptions;
  readonly deps: ConversationDeps;
  readonly state: ConversationState;
  readonly speech: AgentSpeech;
}

/** One short question to the agent's model beside the conversation (temperature 0), counted in the call's usage. */
export async function askModel(ctx: ConversationContext, maxTokens: number, system: string, user: string): Promise<string> {
  ctx.state.usage.llm_calls++;
  const answer = await ctx.deps.languageModel.complete({
    model: ctx.options.agent.llm.model,
    temperature: 0,
    maxTokens,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
  });
  ctx.state.usage.llm_input_tokens += answer.usage.inputTokens;
  ctx.state.usage.llm_output_tokens += answer.usage.outputTokens;
  return answer.text;
}
