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
 * 2a. The first message (system) asks to "brief a colleague" (a warm transfer's briefing): `A
 *    caller needs help. They said: <their last line>.` - their last line being the last line
 *    starting `caller:` (or `user:`) of the last user message.
 * 3a. The last message is the result of `transfer_call` saying `the transfer failed (<reason>)`:
 *    `I am sorry, I could not reach anyone right now (<reason>). I can keep helping you myself.`
 * 3. The last message is the result of the built-in `press_digits`: an empty reply (no text, no
 *    tool call; the agent waits, silent, for what the phone menu says next). Any other tool
 *    result: `The tool answered: <its first 200 characters>.`
 * 3b. Opt-out (`add_to_do_not_call` offered, docs/decisions/0206): the last user message asks not
 *    to be called again ("don't call me", "do not call me", "stop calling me", "never call me",
 *    "remove my number", "take me off your list", "मुझे फ़ोन मत करना", "कॉल मत करना"): calls
 *    `add_to_do_not_call` with `{}`, no text.
 * 4. The last user message says goodbye (bye, goodbye, alvida, "that's all", "that is all") and
 *    `end_call` is offered: calls `end_call` with `{}`, saying `Thank you for calling. Goodbye!`.
 * 4a. Keypad (`press_digits` offered): the last user message offers keys, "press <keys> for
 *    <topic>" (any case; topics end at punctuation or the next "press"): calls `press_digits`
 *    with the keys of the first option whose topic's words (those of 3 letters or more) all
 *    appear in the system prompt; when none does and the message says "press <keys>" once
 *    only, with those keys. Keys are `0-9`, `*`, `#`.
 * 4b. The last user message is only keys the caller pressed, `[pressed <keys>]` (the engine's
 *    form, `call.keypad.caller_digits`): `You pressed <keys>.`
 * 4c. Transfer (`transfer_call` offered, docs/decisions/0160): the last user message asks for a
 *    person (human, person, agent, manager, supervisor, representative, "real person", "someone")
 *    or sounds angry ("ridiculous", "useless", "fed up", "angry", "frustrated", "terrible"): calls
 *    `transfer_call` with the destination whose description shares the most words (4 letters or
 *    more) with the turn, else the first, and `reason` the turn; it says
 *    `Let me connect you to someone who can help.` first.
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
  // Rule 2a: the briefing of a warm transfer's person (docs/decisions/0161).
  if (messages[0]?.role === 'system' && BRIEFING.test(messageText(messages[0]))) return { text: briefingOf(lastUser) };
  // Rule 3a: a transfer that failed (the agent is still with the caller).
  if (last?.role === 'tool' && toolNameOf(messages, last) === TRANSFER_CALL) {
    const failed = /^the transfer failed \(([a-z-]+)\)/.exec(messageText(last));
    if (failed) return { text: `I am sorry, I could not reach anyone right now (${failed[1]}). I can keep helping you myself.` };
  }
  if (last?.role === 'tool') return toolNameOf(messages, last) === PRESS_DIGITS ? { text: '' } : { text: `The tool answered: ${cut(messageText(last), 200)}.` };
  const tools = (request.tools ?? []).filter((t) => t.type === 'function');
  if (asksNotToBeCalled(lastUser) && tools.some((t) => t.function.name === OPT_OUT)) return { toolCalls: [{ name: OPT_OUT, arguments: {} }] };
  if (saysGoodbye(lastUser) && tools.some((t) => t.function.name === 'end_call')) {
    return { text: 'Thank you for calling. Goodbye!', toolCalls: [{ name: 'end_call', arguments: {} }] };
  }
  if (tools.some((t) => t.function.name === PRESS_DIGITS)) {
    const keys = keysToPress(lastUser, systemText(messages));
    if (keys) return { toolCalls: [{ name: PRESS_DIGITS, arguments: { digits: keys } }] };
  }
  const transfer = tools.find((t) => t.function.name === TRANSFER_CALL);
  if (transfer && WANTS_A_PERSON.test(lastUser)) {
    const destination = transferDestinationFor(transfer.function, lastUser);
    if (destination)
      return {
        text: 'Let me connect you to someone who can help.',
        toolCalls: [{ name: TRANSFER_CALL, arguments: { destination, reason: cut(lastUser.trim(), 200) } }],
      };
  }
  const pressed = PRESSED_ONLY.exec(lastUser);
  if (pressed) return { text: `You pressed ${pressed[1]}.` };
  const named = tools.find((t) => mentions(lastUser, t.function.name));
  if (named) return { toolCalls: [{ name: named.function.name, arguments: argumentsFrom(named.function.parameters, lastUser) }] };
  if (!lastUser.trim()) return { text: 'Hello! How can I help you today?' };
  return { text: `You said: ${lastUser.trim().replace(/[.!?।]+$/u, '')}. How can I help further?` };
}

/** The built-in opt-out tool (rule 3b) and the words that ask for it. */
const OPT_OUT = 'add_to_do_not_call';
const NOT_AGAIN =
  /\b(?:(?:do\s*n[o']?t|don['’]t|never|stop)\s+(?:ever\s+)?(?:call(?:ing)?|ring(?:ing)?|phon(?:e|ing))\s+(?:me|us|this number)|remove\s+(?:my|this)\s+number|take\s+(?:me|my number)\s+off)\b/i;
const NOT_AGAIN_DEVANAGARI = /(?:फ़ोन|फोन|कॉल)\s*(?:मत|न)\s*(?:करना|करें|कीजिए|करो)/u;

function asksNotToBeCalled(text: string): boolean {
  return NOT_AGAIN.test(text) || NOT_AGAIN_DEVANAGARI.test(text);
}

/** The built-in transfer tool (media/conversation/transfer.ts) and what makes the simulated model use it (rule 4c). */
const TRANSFER_CALL = 'transfer_call';
const BRIEFING = /\bbrief a colleague\b/i;

function briefingOf(userMessage: string): string {
  const lines = [...userMessage.matchAll(CALLER_LINE)];
  const said = lines.length ? lines[lines.length - 1]![1]!.trim().replace(/[.!?]+$/, '') : '';
  return said ? `A caller needs help. They said: ${said}.` : 'A caller needs help.';
}

const WANTS_A_PERSON = /\b(?:human|person|agent|manager|supervisor|representative|someone|somebody|ridiculous|useless|fed up|angry|frustrated|terrible)\b/i;

/** The destination of rule 4c: the tool's `destination` enum, described by the tool's `<number>: <description>` lines. */
function transferDestinationFor(tool: ChatCompletionRequestTool['function'], turn: string): string | null {
  const properties = (tool.parameters?.properties ?? {}) as Record<string, { enum?: unknown }>;
  const numbers = Array.isArray(properties.destination?.enum) ? properties.destination.enum.filter((n): n is string => typeof n === 'string') : [];
  if (!numbers.length) return null;
  const words = new Set(turn.toLowerCase().match(/[a-z]{4,}/g) ?? []);
  let best = numbers[0]!;
  let bestScore = 0;
  for (const number of numbers) {
    const line = (tool.description ?? '').split('\n').find((l) => l.startsWith(`${number}:`)) ?? '';
    const score = (line.toLowerCase().match(/[a-z]{4,}/g) ?? []).filter((w) => words.has(w)).length;
    if (score > bestScore) {
      best = number;
      bestScore = score;
    }
  }
  return best;
}

export function messageText(message: ChatCompletionRequestMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
  return '';
}

const PRESS_DIGITS = 'press_digits';
/** "press 2 for support" (the topic ends at punctuation or the next "press"). */
const PRESS_FOR = /\bpress\s+([0-9*#]+)\s+for\s+([^,.;:!?]+)/gi;
const PRESS = /\bpress\s+([0-9*#]+)(?![0-9*#])/gi;
/** A caller turn of keys only, as the engine writes it. */
const PRESSED_ONLY = /^\s*\[pressed ([0-9*#A-D]+)\]\s*$/;

/** The keys a phone menu's words ask for, given what the system prompt wants (rule 4a), or null. */
function keysToPress(menu: string, systemPrompt: string): string | null {
  const wanted = new Set(words(systemPrompt));
  for (const [, keys, topic] of menu.matchAll(PRESS_FOR)) {
    const topicWords = words(topic!.split(/\s+(?:or\s+)?press\b/i)[0]!).filter((w) => w.length >= 3);
    if (topicWords.length > 0 && topicWords.every((w) => wanted.has(w))) return keys!;
  }
  const plain = [...menu.matchAll(PRESS)];
  return plain.length === 1 ? plain[0]![1]! : null;
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function systemText(messages: ChatCompletionRequestMessage[]): string {
  return messages
    .filter((m) => m.role === 'system')
    .map(messageText)
    .join('\n');
}

/** The name of the tool whose result `result` is (from the assistant message that called it), or ''. */
function toolNameOf(messages: ChatCompletionRequestMessage[], result: ChatCompletionRequestMessage): string {
  for (const message of messages) {
    const call = message.tool_calls?.find((c) => c.id === result.tool_call_id);
    if (call) return call.function.name;
  }
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
