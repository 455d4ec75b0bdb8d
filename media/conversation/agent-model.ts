import type { ChatMessage, LlmTool, LlmToolCall } from '../../providers/llm/types';
import { askModel, type ConversationContext } from './context';
import { languageName } from './helpers';
import { SentenceChunker } from './sentences';
import type { Reply } from './state';
import { fillVariables } from '../../domain/agents/variables';

/**
 * The agent's language model in the conversation: its system prompt (the agent's, with its
 * `{variables}` filled, and the language to speak), one streamed round of a reply, spoken
 * sentence by sentence as it arrives, and the hang-up prompt's yes-or-no question.
 */
export class AgentModel {
  private readonly systemPrompt: string;

  /** `tools`: what the model is offered (./tool-calls.ts). */
  constructor(
    private readonly ctx: ConversationContext,
    private readonly tools: LlmTool[],
  ) {
    const { agent, userData } = ctx.options;
    const language = `Speak ${languageName(agent.voice.language)}, the caller's language, in short sentences fit to be spoken on a phone call.`;
    this.systemPrompt = [fillVariables(agent.system_prompt, userData), language].filter(Boolean).join('\n\n');
  }

  /**
   * One model round: streams the text into speech as sentences complete; answers the text and
   * tool calls. `unconfirmedTurn`: a speculative reply's caller words, not yet in the history
   * (./speculation.ts); its use is counted on the reply (`reply.usage`) until it is kept.
   */
  async generate(
    reply: Reply,
    passages: string[],
    onFirstToken: (modelMs: number) => void,
    turnEndedAtMs: number | null,
    unconfirmedTurn: string | null = null,
  ): Promise<{ text: string; toolCalls: LlmToolCall[] }> {
    const { llm } = this.ctx.options.agent;
    const messages: ChatMessage[] = [{ role: 'system', content: this.systemPrompt }];
    if (passages.length)
      messages.push({
        role: 'system',
        content: `Passages from the knowledge base that may help with the caller's last words:\n\n${passages.join('\n\n---\n\n')}`,
      });
    messages.push(...this.ctx.state.history);
    if (unconfirmedTurn !== null) messages.push({ role: 'user', content: unconfirmedTurn });
    const chunker = new SentenceChunker();
    const speech = this.ctx.speech.queue(reply, turnEndedAtMs);
    const sentAt = this.ctx.deps.now();
    reply.timing?.modelRequested(sentAt);
    let text = '';
    const toolCalls: LlmToolCall[] = [];
    reply.usage.llm_calls++;
    try {
      for await (const event of this.ctx.deps.languageModel.stream({
        model: llm.model,
        messages,
        tools: this.tools,
        temperature: llm.temperature,
        maxTokens: llm.max_tokens,
        signal: reply.abort.signal,
      })) {
        if (event.type === 'text') {
          onFirstToken(this.ctx.deps.now() - sentAt);
          reply.timing?.modelFirstToken(this.ctx.deps.now());
          text += event.text;
          for (const sentence of chunker.push(event.text)) {
            reply.timing?.sentence(this.ctx.deps.now());
            speech.say(sentence);
          }
        } else if (event.type === 'tool_call') {
          onFirstToken(this.ctx.deps.now() - sentAt);
          toolCalls.push(event.call);
        } else {
          // Read at each use: a speculative reply kept meanwhile counts on the call's from then on.
          reply.usage.llm_input_tokens += event.usage.inputTokens;
          reply.usage.llm_output_tokens += event.usage.outputTokens;
        }
      }
    } catch (error) {
      if (reply.abort.signal.aborted) return { text: '', toolCalls: [] };
      throw error;
    }
    const rest = chunker.flush();
    if (rest) {
      reply.timing?.sentence(this.ctx.deps.now());
      speech.say(rest);
    }
    await speech.finished();
    return { text: text.trim(), toolCalls };
  }

  /** Asks the model, yes or no, whether the conversation is over (`hangup_prompt`). */
  async conversationOver(): Promise<boolean> {
    const { call } = this.ctx.options.agent;
    const lines = this.ctx.state.transcript.map((t) => `${t.role}: ${t.text}`).join('\n');
    const question = `${call.hangup_prompt || 'Is the conversation over?'}\n\nAnswer Yes or No.`;
    const answer = await askModel(
      this.ctx,
      16,
      'You decide whether a phone conversation is over. Answer Yes or No only.',
      `Conversation so far:\n${lines}\n\n${question}`,
    );
    return /^\s*yes\b/i.test(answer);
  }
}
