/** A message of a chat completions request, as clients send it. */
export interface ChatCompletionRequestMessage {
  role: string;
  /** Text, or OpenAI's content parts (only the `text` parts are read). */
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatCompletionRequestTool {
  type: string;
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** The body of `POST /v1/chat/completions`: the fields the simulator reads, and whatever else the client sent. */
export interface ChatCompletionRequestBody {
  model: string;
  messages: ChatCompletionRequestMessage[];
  tools?: ChatCompletionRequestTool[];
  temperature?: number;
  max_tokens?: number;
  /** OpenAI's newer name for `max_tokens`; the simulator honours either. */
  max_completion_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  response_format?: { type: string };
  [field: string]: unknown;
}

/** What the simulated model answers: text, tool calls or both. */
export interface SimulatedReply {
  text?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /** Time to the first token of this reply, instead of the simulator's `latencyMs`. */
  latencyMs?: number;
}

export type RespondHook = (request: ChatCompletionRequestBody) => SimulatedReply | Promise<SimulatedReply>;

/** The words that end a conversation, in the caller's last turn. */
const GOODBYE = /\b(?:good\s*-?\s*bye|bye(?:\s*-?\s*bye)?|alvida|that['’]?s all|that is all)\b/i;
const GOODBYE_DEVANAGARI = 'अलविदा';

/** Marks a yes/no question (a hang-up check): "... Answer Yes or No." */
const YES_OR_NO = /\byes or no\b/i;

/** A transcript written into one message as lines, the caller's lines starting `user:` or `caller:`. */
const CALLER_LINE = /^\s*(?:user|caller)\s*:(.*)$/gim;

/**
 * The simulated model's own behaviour, a deterministic agent good enough to hold a call with,
 * tried in this order:
 * 1. `response_format: {type: 'json_object'}`: a JSON object, `{"summary": "Simulated summary:
 *    <last user message>"}` when any message mentions a summary, else `{}`.
 * 2. A yes/no question - the last message (system or user) contains "yes or no", any case, as in
 *    "Answer Yes or No.": `Yes` when the caller's last turn says goodbye, else `No`. The caller's
 *    last turn is the last `user` message before the question; when there is none (the
 *    transcript is inside the question), the last line of the question starting `user:` or
 *    `caller:`.
 * 3. The last message is a tool result: `The tool answered: <its first 200 characters>.`
 * 4. The last user message says goodbye (bye, goodbye, alvida, "that's all", "that is all") and
 *    `end_call` is offered: calls `end_call` with `{}`, saying `Thank you for calling. Goodbye!`.
 * 5. The last user message names an offered tool (its name, or with underscores as spaces, any
 *    case): calls it, each required string property of its schema set to the user's text.
 * 6. Otherwise: `You said: <last user message>. How can I help further?` (two sentences), or a
 *    greeting when there is no user message.
 */
export function defaultRespond(request: ChatCompletionRequestBody): SimulatedReply {
  const messages = request.messages;
  const last = messages[messages.length - 1];
  const lastUser = lastUserText(messages);
  if (request.response_format?.type === 'json_object') {
    const asksSummary = messages.some((m) => /summar/i.test(messageText(m)));
    return { text: JSON.stringify(asksSummary ? { summary: `Simulated summary: ${cut(lastUser, 200)}` } : {}) };
  }
  if (last && (last.role === 'system' || last.role === 'user') && YES_OR_NO.test(messageText(last))) {
    return { text: saysGoodbye(judgedTurn(messages)) ? 'Yes' : 'No' };
  }
  if (last?.role === 'tool') return { text: `The tool answered: ${cut(messageText(last), 200)}.` };
  const tools = (request.tools ?? []).filter((t) => t.type === 'function');
  if (saysGoodbye(lastUser) && tools.some((t) => t.function.name === 'end_call')) {
    return { text: 'Thank you for calling. Goodbye!', toolCalls: [{ name: 'end_call', arguments: {} }] };
  }
  const named = tools.find((t) => mentions(lastUser, t.function.name));
  if (named) return { toolCalls: [{ name: named.function.name, arguments: argumentsFrom(named.function.parameters, lastUser) }] };
  if (!lastUser.trim()) return { text: 'Hello! How can I help you today?' };
  return { text: `You said: ${lastUser.trim().replace(/[.!?।]+$/u, '')}. How can I help further?` };
}

export function messageText(message: ChatCompletionRequestMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
  return '';
}

function lastUserText(messages: ChatCompletionRequestMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messageText(messages[i]!);
  return '';
}

/** The caller's turn a yes/no question is about (see defaultRespond). */
function judgedTurn(messages: ChatCompletionRequestMessage[]): string {
  const before = lastUserText(messages.slice(0, -1));
  if (before) return before;
  const callerLines = [...messageText(messages[messages.length - 1]!).matchAll(CALLER_LINE)];
  return callerLines.length > 0 ? callerLines[callerLines.length - 1]![1]! : '';
}

function saysGoodbye(text: string): boolean {
  return GOODBYE.test(text) || text.includes(GOODBYE_DEVANAGARI);
}

function mentions(text: string, toolName: string): boolean {
  const lower = text.toLowerCase();
  const name = toolName.toLowerCase();
  return lower.includes(name) || lower.includes(name.replace(/_/g, ' '));
}

function argumentsFrom(schema: Record<string, unknown> | undefined, userText: string): Record<string, unknown> {
  const required = Array.isArray(schema?.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  const properties = (typeof schema?.properties === 'object' && schema.properties !== null ? schema.properties : {}) as Record<string, { type?: unknown }>;
  return Object.fromEntries(required.filter((name) => properties[name]?.type === 'string').map((name) => [name, userText]));
}

function cut(text: string, length: number): string {
  return text.length > length ? text.slice(0, length) : text;
}
