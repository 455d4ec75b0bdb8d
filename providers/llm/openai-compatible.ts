import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { isRefusal, ProviderUnavailableError, refusalOf } from '../errors';
import type { ChatMessage, LanguageModel, LlmCompletion, LlmRequest, LlmStreamEvent, LlmTool, LlmToolCall, LlmUsage } from './types';

type WireMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type WireTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;
type WireToolCallDelta = OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall;
/** The requests we send, held to the SDK's own types (test/conformance/openai-chat.test.ts checks the wire). */
export type StreamingChatRequest = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
export type WholeChatRequest = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;

export interface OpenAiCompatibleLanguageModelOptions {
  /** The server's root, e.g. `http://127.0.0.1:1234`; `/v1` is appended unless it is there already. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; empty for servers without keys (a placeholder is sent). */
  apiKey: string;
  /** The longest the server may stay silent: before the answer starts, and between two streamed chunks. */
  timeoutMs: number;
  /** The server setting holding the key (config/env.ts), named when the server refuses it. */
  apiKeySetting?: string;
  /** The server setting holding the base URL, named when the server has no chat-completions route (a 404 about no model). */
  baseUrlSetting?: string;
  /**
   * A server that knows the model by its own name (a local server's `LLM_LOCAL_MODEL`): `name`
   * is sent instead of the agent's catalog id (null: the catalog id), and a refused model names
   * `setting`, the operator's, since the agent cannot choose another.
   */
  serverModel?: { name: string | null; setting: string };
}

/** The refused thing and the setting that fixes it (see ProviderRefusedError). */
export interface RefusedSetting {
  refused: string;
  setting: string;
}

/** Where one request goes: the client (with its base URL, query and credentials) and the model name sent. */
export interface ChatTarget {
  client: OpenAI;
  model: string;
}

const SERVICE = 'language model';
/** The agent setting behind each field of a chat request, for a refusal that names the field (OpenAI's `param`). */
const AGENT_SETTING_OF_PARAM: Record<string, string> = {
  model: 'llm.model',
  temperature: 'llm.temperature',
  max_tokens: 'llm.max_tokens',
  tools: 'tools',
  messages: 'system_prompt',
};

/**
 * A chat-completions service through the `openai` package: streaming replies with tool calls,
 * and whole ones. Subclasses say where a request for a model goes and which setting a refusal
 * names. No retries: a reply that comes late is worth less to a caller on the phone than an
 * error the conversation can handle.
 */
export abstract class ChatCompletionsLanguageModel implements LanguageModel {
  constructor(protected readonly timeoutMs: number) {}

  /** The client and the model name for a request for the agent's `model`. */
  protected abstract target(model: string): ChatTarget;

  /** The server setting holding the credentials. */
  protected abstract readonly apiKeySetting: string;

  /** A refusal this service tells apart (a deployment that does not exist); null: the general rules. */
  protected refusedSetting(_err: APIError, _request: LlmRequest): RefusedSetting | null {
    return null;
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const guard = new RequestGuard(this.timeoutMs, request, (err) => this.refusalOfRequest(err, request));
    try {
      const { client, model } = this.target(request.model);
      const body: StreamingChatRequest = { ...wireParams(request, model), stream: true, stream_options: { include_usage: true } };
      const chunks = await guard.within(client.chat.completions.create(body, { signal: guard.signal }));
      const iterator = chunks[Symbol.asyncIterator]();
      const toolCalls = new ToolCallAssembler();
      let usage: LlmUsage = { inputTokens: 0, outputTokens: 0 };
      let finished = false;
      for (;;) {
        const next = await guard.within(iterator.next());
        if (next.done) break;
        const chunk = next.value;
        if (chunk.usage) usage = toUsage(chunk.usage);
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        if (choice.delta?.content) yield { type: 'text', text: choice.delta.content };
        for (const part of choice.delta?.tool_calls ?? []) toolCalls.add(part);
        if (choice.finish_reason) {
          finished = true;
          if (choice.finish_reason === 'tool_calls') for (const call of toolCalls.drain()) yield { type: 'tool_call', call };
        }
      }
      // The `openai` stream ends quietly when aborted; an abort or a timeout must not pass for a whole reply.
      guard.throwIfStopped();
      if (!finished) throw new ProviderUnavailableError(SERVICE, 'the reply stream ended without a finish reason');
      for (const call of toolCalls.drain()) yield { type: 'tool_call', call };
      yield { type: 'usage', usage };
    } finally {
      // Also when the consumer stops early: closes the connection, so the server stops generating.
      guard.dispose();
    }
  }

  async complete(request: LlmRequest & { jsonObject?: boolean }): Promise<LlmCompletion> {
    const guard = new RequestGuard(this.timeoutMs, request, (err) => this.refusalOfRequest(err, request));
    try {
      const { client, model } = this.target(request.model);
      const body: WholeChatRequest = {
        ...wireParams(request, model),
        stream: false,
        ...(request.jsonObject ? { response_format: { type: 'json_object' as const } } : {}),
      };
      const completion = await guard.within(client.chat.completions.create(body, { signal: guard.signal }));
      const message = completion.choices?.[0]?.message;
      if (!message) throw new ProviderUnavailableError(SERVICE, 'answered a completion without a choice');
      return {
        text: message.content ?? '',
        toolCalls: (message.tool_calls ?? []).flatMap((c) =>
          c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
        ),
        usage: completion.usage ? toUsage(completion.usage) : { inputTokens: 0, outputTokens: 0 },
      };
    } finally {
      guard.dispose();
    }
  }

  /**
   * A 4xx of the server: the key, this service's own cases, or the setting of the agent behind
   * the field the server names (`param`; `model_not_found` names the model), else the agent's
   * language-model settings.
   */
  private refusalOfRequest(err: APIError, request: LlmRequest): Error {
    const reason = describeFailure(err, this.timeoutMs);
    const own = err.status === 401 || err.status === 403 ? null : this.refusedSetting(err, request);
    if (own) return refusalOf(SERVICE, err.status ?? 400, reason, this.apiKeySetting, own);
    const param = err.code === 'model_not_found' ? 'model' : err.param;
    const setting = param ? AGENT_SETTING_OF_PARAM[param] : undefined;
    const refused =
      setting === 'llm.model'
        ? { refused: `the agent's model '${request.model}'`, setting: 'agent setting llm.model' }
        : setting
          ? { refused: `the agent's ${setting}`, setting: `agent setting ${setting}` }
          : { refused: "the agent's language-model request", setting: 'agent settings llm.model, llm.temperature, llm.max_tokens, system_prompt, tools' };
    return refusalOf(SERVICE, err.status ?? 400, reason, this.apiKeySetting, refused);
  }
}

/**
 * Any server speaking OpenAI's chat completions at `<base>/v1/chat/completions` with a Bearer
 * key: OpenAI itself, and the OpenAI-compatible ones (vLLM, llama.cpp, Ollama, LM Studio, the
 * local simulator).
 */
export class OpenAiCompatibleLanguageModel extends ChatCompletionsLanguageModel {
  protected readonly apiKeySetting: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiCompatibleLanguageModelOptions) {
    super(options.timeoutMs);
    this.apiKeySetting = options.apiKeySetting ?? 'LLM_LOCAL_API_KEY';
    const root = options.baseUrl.replace(/\/+$/, '');
    this.client = new OpenAI({
      baseURL: root.endsWith('/v1') ? root : `${root}/v1`,
      apiKey: options.apiKey || 'no-key',
      timeout: Math.max(1, Math.round(options.timeoutMs)),
      maxRetries: 0,
      // Explicit so that OPENAI_ORG_ID / OPENAI_PROJECT_ID in the environment do not leak into requests.
      organization: null,
      project: null,
    });
  }

  protected target(model: string): ChatTarget {
    return { client: this.client, model: this.options.serverModel?.name ?? model };
  }

  protected override refusedSetting(err: APIError, request: LlmRequest): RefusedSetting | null {
    const { serverModel, baseUrlSetting } = this.options;
    const aboutModel = err.code === 'model_not_found' || err.param === 'model';
    if (serverModel && aboutModel) return { refused: `the model '${serverModel.name ?? request.model}'`, setting: `server setting ${serverModel.setting}` };
    // A 404 about nothing named: no such path at this base URL, or (Ollama) no such model.
    if (baseUrlSetting && err.status === 404 && !aboutModel) {
      return serverModel
        ? {
            refused: `the chat-completions path or the model '${serverModel.name ?? request.model}'`,
            setting: `server settings ${baseUrlSetting}, ${serverModel.setting}`,
          }
        : { refused: 'the chat-completions path', setting: `server setting ${baseUrlSetting}` };
    }
    return null;
  }
}

/**
 * One request's cancellation: the caller's signal, and a watchdog that gives up when the
 * server stays silent for `timeoutMs` while we wait on it (not while the consumer holds a
 * streamed event, so a slow consumer is not taken for a slow server).
 */
class RequestGuard {
  private readonly controller = new AbortController();
  private timedOut = false;
  private readonly onCallerAbort = () => this.controller.abort();
  private readonly callerSignal: AbortSignal | undefined;

  constructor(
    private readonly timeoutMs: number,
    request: LlmRequest,
    private readonly refusal: (err: APIError) => Error,
  ) {
    const callerSignal = (this.callerSignal = request.signal);
    if (callerSignal?.aborted) this.controller.abort();
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Awaits the server, turning its failures into ours. */
  async within<T>(pending: Promise<T>): Promise<T> {
    const timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.timeoutMs);
    try {
      return await pending;
    } catch (err) {
      throw this.failure(err);
    } finally {
      clearTimeout(timer);
    }
  }

  throwIfStopped(): void {
    if (this.callerSignal?.aborted || this.timedOut) throw this.failure(null);
  }

  dispose(): void {
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    this.controller.abort();
  }

  private failure(err: unknown): Error {
    if (this.callerSignal?.aborted) return new DOMException('the language model request was aborted', 'AbortError');
    if (this.timedOut) return new ProviderUnavailableError(SERVICE, `no answer within ${this.timeoutMs} ms`);
    if (err instanceof ProviderUnavailableError) return err;
    if (err instanceof APIError && err.status !== undefined && isRefusal(err.status)) return this.refusal(err);
    return new ProviderUnavailableError(SERVICE, describeFailure(err, this.timeoutMs));
  }
}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof APIConnectionTimeoutError) return `no answer within ${timeoutMs} ms`;
  if (err instanceof APIConnectionError) {
    // The `openai` package wraps fetch's TypeError, whose cause names what went wrong (ECONNREFUSED).
    const cause = (err.cause as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
    const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
    return detail ? `connection failed: ${detail}` : 'connection failed';
  }
  if (err instanceof APIError) {
    const detail = (err.error as { message?: unknown } | undefined)?.message;
    const message = typeof detail === 'string' && detail ? detail : err.message;
    return err.status === undefined ? `streamed an error: ${message}` : `answered ${err.status}: ${message}`;
  }
  if (err instanceof SyntaxError) return 'answered a body that is not JSON';
  // undici reports a connection that broke while the body was coming as "terminated".
  return `the answer broke off: ${(err as Error)?.message ?? String(err)}`;
}

/** Joins the streamed pieces of tool calls by their index. */
class ToolCallAssembler {
  private readonly calls = new Map<number, LlmToolCall>();

  add(part: WireToolCallDelta): void {
    const call = this.calls.get(part.index) ?? { id: '', name: '', arguments: '' };
    if (part.id) call.id = part.id;
    if (part.function?.name) call.name += part.function.name;
    if (part.function?.arguments) call.arguments += part.function.arguments;
    this.calls.set(part.index, call);
  }

  /** The calls so far, in index order, and forgets them. */
  drain(): LlmToolCall[] {
    const whole = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
    this.calls.clear();
    return whole;
  }
}

function wireParams(request: LlmRequest, model: string) {
  return {
    model,
    messages: request.messages.map(toWireMessage),
    ...(request.tools && request.tools.length > 0 ? { tools: request.tools.map(toWireTool) } : {}),
    temperature: request.temperature,
    max_tokens: request.maxTokens,
  };
}

function toWireMessage(message: ChatMessage): WireMessage {
  if (message.role !== 'assistant' || !message.tool_calls?.length)
    return message.role === 'assistant' ? { role: 'assistant', content: message.content } : message;
  return {
    role: 'assistant',
    content: message.content,
    tool_calls: message.tool_calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
  };
}

function toWireTool(tool: LlmTool): WireTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

function toUsage(usage: { prompt_tokens?: number | null; completion_tokens?: number | null }): LlmUsage {
  return { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
}
