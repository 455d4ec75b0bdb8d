import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { listenOnLoopback, readBody, withLiveSettings, type RunningSimulator, type SimulatorMode, type SimulatorOptions } from '../simulated-service';
import { defaultRespond, messageText, type ChatCompletionRequestBody, type RespondHook, type SimulatedReply } from './simulated-replies';
import { countTokens, splitIntoTokens } from './simulated-tokens';

export {
  defaultRespond,
  type ChatCompletionRequestBody,
  type ChatCompletionRequestMessage,
  type ChatCompletionRequestTool,
  type RespondHook,
  type SimulatedReply,
} from './simulated-replies';
export { countTokens, splitIntoTokens } from './simulated-tokens';

export interface LanguageModelSimulatorOptions extends SimulatorOptions {
  /** The key clients must send as `Authorization: Bearer`; empty accepts any client. */
  apiKey?: string;
  /** Gap between two streamed chunks (default 5 ms); `latencyMs` is the time to the first. */
  tokenIntervalMs?: number;
  /** What the model answers (default: defaultRespond). */
  respond?: RespondHook;
  /** Listed by `GET /v1/models`; completions answer any model name. */
  models?: string[];
  /** The deployments an Azure OpenAI client may name (default: one per model of `models`, named like it). */
  azureDeployments?: string[];
}

/** Which of the two wire dialects a request came in. */
export type ChatRoute =
  /** OpenAI and compatible servers: `POST /v1/chat/completions`, `Authorization: Bearer <key>`. */
  | { api: 'openai' }
  /** Azure OpenAI: `POST /openai/deployments/<deployment>/chat/completions?api-version=<v>`, `api-key: <key>`. */
  | { api: 'azure'; deployment: string; apiVersion: string };

/** A valid chat completions request as it arrived: its route, and its body. */
export interface ReceivedChatRequest {
  route: ChatRoute;
  body: ChatCompletionRequestBody;
}

/** A stream the client closed before its end. */
export interface InterruptedStream {
  request: ChatCompletionRequestBody;
  /** Text and tool-argument pieces written before the close, and how many the reply had. */
  piecesSent: number;
  piecesPlanned: number;
}

export interface LanguageModelSimulator extends RunningSimulator {
  apiKey: string;
  tokenIntervalMs: number;
  /** Replace to script the model; back to defaultRespond for the built-in agent. */
  respond: RespondHook;
  readonly models: readonly string[];
  /** Every valid chat completions request body, oldest first. */
  readonly requests: ChatCompletionRequestBody[];
  /** The same requests with the route each came by (OpenAI's or an Azure deployment's). */
  readonly received: ReceivedChatRequest[];
  readonly interruptedStreams: InterruptedStream[];
}

export const LLM_SIMULATOR_API_KEY = 'simulator-api-key';

/** The catalog's model ids, so the models of any agent are listed. */
export const DEFAULT_SIMULATED_MODELS = ['local-chat', 'gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini', 'gpt-4.1'];

const DEFAULT_TOKEN_INTERVAL_MS = 5;

/** `api-version` values of Azure OpenAI's data plane: dated, GA or `-preview`. */
const AZURE_API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;
const AZURE_CHAT_PATH = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

interface ToolCallOut {
  id: string;
  name: string;
  arguments: string;
}

/** A reply cut to `max_tokens`, ready to be written streamed or whole. */
interface PlannedCompletion {
  id: string;
  created: number;
  model: string;
  textPieces: string[];
  toolCalls: ToolCallOut[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/**
 * A stand-in for an OpenAI-compatible chat completions server on loopback, with OpenAI's wire
 * formats (Bearer key; errors as `{error: {message, type, param, code}}`):
 * - `POST /v1/chat/completions`: `chat.completion`, or with `stream: true` server-sent
 *   `chat.completion.chunk`s - the role, one chunk per token (see ./simulated-tokens.ts), each
 *   tool call's name then its arguments in pieces, the finish reason, a last chunk with `usage`
 *   and no choices when `stream_options.include_usage`, then `data: [DONE]`. `max_tokens` (or
 *   `max_completion_tokens`) cuts the reply with finish reason `length`. Stream headers go out
 *   at once; the first token after `latencyMs`, the next ones `tokenIntervalMs` apart.
 *   Usage: input tokens are the tokens of all message contents; output tokens those of the text
 *   plus each tool call's name and arguments.
 * - `GET /v1/models`: the `models`.
 * - Azure OpenAI's dialect (learn.microsoft.com, "Azure OpenAI in Azure AI Foundry Models REST
 *   API reference"): `POST /openai/deployments/{deployment}/chat/completions?api-version=...`
 *   with the key in an `api-key` header. Azure's own answers: 404 `Resource not found` without
 *   an `api-version` (or on a path it does not serve), 400 for a version it does not know, 401
 *   `Access denied due to invalid subscription key...` for a wrong key, 404 `DeploymentNotFound`
 *   for a deployment not in `azureDeployments`; errors as `{error: {code, message}}`. The body's
 *   `model` may be absent (the deployment decides the model); a stream starts with Azure's
 *   prompt-filter chunk, which has no choices.
 * `latencyMs` applies to completions only; `mode` (failing: 500, hanging: no answer) to all.
 */
export async function startLanguageModelSimulator(options: LanguageModelSimulatorOptions = {}): Promise<LanguageModelSimulator> {
  const state = {
    latencyMs: options.latencyMs ?? 0,
    tokenIntervalMs: options.tokenIntervalMs ?? DEFAULT_TOKEN_INTERVAL_MS,
    mode: 'normal' as SimulatorMode,
    apiKey: options.apiKey ?? LLM_SIMULATOR_API_KEY,
    respond: options.respond ?? defaultRespond,
  };
  const models = options.models ?? DEFAULT_SIMULATED_MODELS;
  const azureDeployments = new Set(options.azureDeployments ?? models);
  const requests: ChatCompletionRequestBody[] = [];
  const received: ReceivedChatRequest[] = [];
  const interruptedStreams: InterruptedStream[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const gone = closeSignal(res);
    const text = await readBody(req);
    if (state.mode === 'hanging') return; // the socket stays open until the client gives up
    if (state.mode === 'failing') return sendError(res, 500, 'simulated provider failure', 'server_error');
    const url = new URL(req.url ?? '/', 'http://simulator');
    const path = url.pathname;
    if (path.startsWith('/openai/')) return handleAzure(req, res, url, text, gone);
    if (state.apiKey && req.headers.authorization !== `Bearer ${state.apiKey}`) {
      return sendError(res, 401, 'Incorrect API key provided', 'invalid_request_error', 'invalid_api_key');
    }
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'simulator' })) });
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') return sendError(res, 404, `no route ${req.method} ${path}`, 'invalid_request_error');
    const body = parseRequest(text);
    if (typeof body === 'string') return sendError(res, 400, body, 'invalid_request_error');
    return complete(res, { api: 'openai' }, body, gone);
  };

  const handleAzure = async (req: IncomingMessage, res: ServerResponse, url: URL, text: string, gone: AbortSignal): Promise<void> => {
    const deployment = AZURE_CHAT_PATH.exec(url.pathname)?.[1];
    const apiVersion = url.searchParams.get('api-version');
    if (req.method !== 'POST' || !deployment || !apiVersion) return sendAzureError(res, 404, '404', 'Resource not found');
    if (!AZURE_API_VERSION.test(apiVersion)) return sendAzureError(res, 400, 'BadRequest', 'API version not supported');
    if (state.apiKey && req.headers['api-key'] !== state.apiKey) {
      return sendAzureError(
        res,
        401,
        '401',
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      );
    }
    if (!azureDeployments.has(decodeURIComponent(deployment))) {
      return sendAzureError(
        res,
        404,
        'DeploymentNotFound',
        'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
      );
    }
    const body = parseRequest(text, decodeURIComponent(deployment));
    if (typeof body === 'string') return sendAzureError(res, 400, 'BadRequest', body);
    return complete(res, { api: 'azure', deployment: decodeURIComponent(deployment), apiVersion }, body, gone);
  };

  const complete = async (res: ServerResponse, route: ChatRoute, body: ChatCompletionRequestBody, gone: AbortSignal): Promise<void> => {
    requests.push(body);
    received.push({ route, body });
    let reply: SimulatedReply;
    try {
      reply = await state.respond(body);
    } catch (err) {
      return sendError(res, 500, `the simulated model failed: ${(err as Error).message}`, 'server_error');
    }
    const plan = planCompletion(body, reply);
    if (body.stream === true) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
      res.flushHeaders();
      const sent = await streamCompletion(
        res,
        plan,
        body.stream_options?.include_usage === true,
        reply.latencyMs ?? state.latencyMs,
        state.tokenIntervalMs,
        gone,
        route.api === 'azure',
      );
      if (gone.aborted) interruptedStreams.push({ request: body, piecesSent: sent, piecesPlanned: countPieces(plan) });
      return;
    }
    if (await pause(reply.latencyMs ?? state.latencyMs, gone)) sendJson(res, 200, wholeCompletion(plan));
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, (err as Error).message, 'server_error');
      else res.destroy();
    });
  });
  const url = await listenOnLoopback(server, options);
  const running = {
    url,
    models,
    requests,
    received,
    interruptedStreams,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return withLiveSettings(running, state, ['latencyMs', 'tokenIntervalMs', 'mode', 'apiKey', 'respond']);
}

/** The body as a request, or why it is not one. */
function parseRequest(text: string, deployment?: string): ChatCompletionRequestBody | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'the body is not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the body must be a JSON object';
  const body = value as Record<string, unknown>;
  // On Azure the deployment names the model; the body's is optional.
  if (deployment !== undefined && body.model === undefined) body.model = deployment;
  if (typeof body.model !== 'string' || !body.model) return 'you must provide a model parameter';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "'messages' must be a non-empty array";
  if (!body.messages.every((m) => typeof m === 'object' && m !== null && typeof (m as { role?: unknown }).role === 'string'))
    return "each of 'messages' needs a 'role'";
  for (const field of ['max_tokens', 'max_completion_tokens']) {
    const limit = body[field];
    if (limit !== undefined && limit !== null && !(Number.isInteger(limit) && (limit as number) >= 1)) return `'${field}' must be an integer of at least 1`;
  }
  return body as ChatCompletionRequestBody;
}

function planCompletion(body: ChatCompletionRequestBody, reply: SimulatedReply): PlannedCompletion {
  let budget = body.max_completion_tokens ?? body.max_tokens ?? Infinity;
  const allPieces = splitIntoTokens(reply.text ?? '');
  const textPieces = allPieces.slice(0, budget);
  let cut = textPieces.length < allPieces.length;
  let outputTokens = countTokens(textPieces.join(''));
  budget -= textPieces.length;
  const toolCalls: ToolCallOut[] = [];
  for (const call of reply.toolCalls ?? []) {
    const args = JSON.stringify(call.arguments);
    const cost = countTokens(call.name) + countTokens(args);
    if (cut || cost > budget) {
      cut = true;
      break;
    }
    toolCalls.push({ id: `call_${randomBytes(12).toString('hex')}`, name: call.name, arguments: args });
    budget -= cost;
    outputTokens += cost;
  }
  const inputTokens = body.messages.reduce((sum, m) => sum + countTokens(messageText(m)), 0);
  return {
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    textPieces,
    toolCalls,
    finishReason: cut ? 'length' : toolCalls.length > 0 ? 'tool_calls' : 'stop',
    usage: { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
  };
}

function wholeCompletion(plan: PlannedCompletion) {
  const text = plan.textPieces.join('');
  const toolCalls = plan.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (toolCalls.length > 0 ? null : ''),
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: plan.finishReason,
      },
    ],
    usage: plan.usage,
  };
}

function countPieces(plan: PlannedCompletion): number {
  return plan.textPieces.length + plan.toolCalls.reduce((sum, c) => sum + 1 + splitIntoTokens(c.arguments).length, 0);
}

/**
 * Writes the reply as server-sent chunks, stopping as soon as the client is `gone`. Returns how
 * many text and tool-call pieces went out.
 */
async function streamCompletion(
  res: ServerResponse,
  plan: PlannedCompletion,
  includeUsage: boolean,
  latencyMs: number,
  intervalMs: number,
  gone: AbortSignal,
  azure: boolean,
): Promise<number> {
  const base = {
    id: plan.id,
    object: 'chat.completion.chunk',
    created: plan.created,
    model: plan.model,
    system_fingerprint: null,
    ...(includeUsage ? { usage: null } : {}),
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const deltas: Record<string, unknown>[] = [
    ...plan.textPieces.map((content) => ({ content })),
    ...plan.toolCalls.flatMap((call, index) => [
      { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
      ...splitIntoTokens(call.arguments).map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] })),
    ]),
  ];
  // Each chunk is due at a fixed time from the request (the first after `latencyMs`, then one
  // every `intervalMs`), not a pause after the previous write: timer lag in this process then
  // does not pile up over a reply and pass for the client's own overhead.
  const startedAt = performance.now();
  const untilDue = (index: number) => startedAt + latencyMs + index * intervalMs - performance.now();
  if (!(await pause(untilDue(0), gone))) return 0;
  // Azure's content filter speaks first: its verdict on the prompt, in a chunk without choices.
  if (azure)
    writeEvent(res, { id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] });
  writeEvent(res, chunk({ role: 'assistant', content: '', refusal: null }));
  let sent = 0;
  for (const delta of deltas) {
    if (sent > 0 && !(await pause(untilDue(sent), gone))) return sent;
    if (gone.aborted) return sent;
    writeEvent(res, chunk(delta));
    sent++;
  }
  if (gone.aborted) return sent;
  writeEvent(res, chunk({}, plan.finishReason));
  if (includeUsage) writeEvent(res, { ...base, choices: [], usage: plan.usage });
  res.end('data: [DONE]\n\n');
  return sent;
}

function writeEvent(res: ServerResponse, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

/** Aborted when the client closes the connection before the answer is complete. */
function closeSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Waits `ms`; false when the client went away meanwhile. */
async function pause(ms: number, gone: AbortSignal): Promise<boolean> {
  if (gone.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal: gone });
    return true;
  } catch {
    return false;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (!res.destroyed) res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}

function sendAzureError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message } });
}
