/**
 * The language model as the conversation engine and post-call analytics use it: OpenAI's chat
 * completions protocol (through the `openai` package), so any OpenAI-compatible server works
 * via a base URL. Tool calls arrive whole (their streamed argument pieces joined).
 */
export interface LanguageModel {
  /** Streams one reply: text pieces as they come, then whole tool calls, then the usage. */
  stream(request: LlmRequest): AsyncIterable<LlmStreamEvent>;
  /** One reply without streaming (yes/no questions, summaries, extractions). */
  complete(request: LlmRequest & { jsonObject?: boolean }): Promise<LlmCompletion>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: LlmToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface LlmToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as the model wrote it (may be invalid JSON). */
  arguments: string;
}

/** A function the model may call (an agent's HTTP tool, or the built-in `end_call`). */
export interface LlmTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  model: string;
  messages: ChatMessage[];
  tools?: LlmTool[];
  temperature: number;
  maxTokens: number;
  /** Aborts the request (barge-in, hang-up). */
  signal?: AbortSignal;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

export type LlmStreamEvent = { type: 'text'; text: string } | { type: 'tool_call'; call: LlmToolCall } | { type: 'usage'; usage: LlmUsage };

export interface LlmCompletion {
  text: string;
  toolCalls: LlmToolCall[];
  usage: LlmUsage;
}
