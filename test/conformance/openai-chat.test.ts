import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { AzureOpenAI } from 'openai';
import { languageModels } from '../../providers';
import type { LanguageModel, LlmRequest } from '../../providers/llm/types';
import type { LanguageModelsConfig } from '../../config/env';

type StreamingParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type MessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * Every top-level field of the SDK's streaming chat request, as a value the test can read. The
 * typechecker holds this list to `ChatCompletionCreateParamsStreaming` both ways (a missing
 * field and an extra one are errors), so it is the SDK's list, not ours.
 */
const SDK_REQUEST_FIELDS = {
  messages: true,
  model: true,
  audio: true,
  frequency_penalty: true,
  function_call: true,
  functions: true,
  logit_bias: true,
  logprobs: true,
  max_completion_tokens: true,
  max_tokens: true,
  metadata: true,
  modalities: true,
  moderation: true,
  n: true,
  parallel_tool_calls: true,
  prediction: true,
  presence_penalty: true,
  prompt_cache_key: true,
  prompt_cache_options: true,
  prompt_cache_retention: true,
  reasoning_effort: true,
  response_format: true,
  safety_identifier: true,
  seed: true,
  service_tier: true,
  stop: true,
  store: true,
  stream: true,
  stream_options: true,
  temperature: true,
  tool_choice: true,
  tools: true,
  top_logprobs: true,
  top_p: true,
  user: true,
  verbosity: true,
  web_search_options: true,
} as const satisfies Record<keyof StreamingParams, true>;

/** The fields of each message role in the SDK's types (assistant, system, tool and user messages; the same list-both-ways check). */
const SDK_MESSAGE_FIELDS: Record<string, readonly string[]> = {
  system: Object.keys({ role: 1, content: 1, name: 1 } satisfies Record<keyof OpenAI.Chat.Completions.ChatCompletionSystemMessageParam, 1>),
  user: Object.keys({ role: 1, content: 1, name: 1 } satisfies Record<keyof OpenAI.Chat.Completions.ChatCompletionUserMessageParam, 1>),
  assistant: Object.keys({ role: 1, content: 1, name: 1, audio: 1, function_call: 1, refusal: 1, tool_calls: 1 } satisfies Record<
    keyof OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam,
    1
  >),
  tool: Object.keys({ role: 1, content: 1, tool_call_id: 1 } satisfies Record<keyof OpenAI.Chat.Completions.ChatCompletionToolMessageParam, 1>),
};

interface Captured {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/**
 * A local HTTP server that records each request and answers it with the smallest valid chat
 * completion (a whole one, or a stream with one text chunk, the finish reason and the usage).
 */
async function startCapture(): Promise<{ url: string; requests: Captured[]; close(): Promise<void> }> {
  const requests: Captured[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://capture');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body });
      const base = { id: 'chatcmpl-1', created: 0, model: String(body.model ?? '') };
      if (body.stream === true) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
        event({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello.' }, finish_reason: null }] });
        event({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
        event({ ...base, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.', refusal: null }, finish_reason: 'stop', logprobs: null }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A request with everything the engine sends: a system prompt, turns, an earlier tool call and its result, tools. */
const FULL_REQUEST: LlmRequest = {
  model: 'gpt-4o-mini',
  temperature: 0.4,
  maxTokens: 300,
  messages: [
    { role: 'system', content: 'You are Asha.' },
    { role: 'user', content: 'Where is order 42?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'lookup_order', arguments: '{"order_id":"42"}' }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"status":"shipped"}' },
  ],
  tools: [
    {
      name: 'lookup_order',
      description: 'Finds an order',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
    },
  ],
};

/** The headers that carry credentials or say what the body is, as a client sent them. */
function wireHeaders(request: Captured) {
  return { authorization: request.headers.authorization, 'api-key': request.headers['api-key'], 'content-type': request.headers['content-type'] };
}

/** Our request is one the SDK's types describe: known top-level fields, messages of known roles with known fields, function tools. */
function expectSdkShape(body: Record<string, unknown>) {
  const unknown = Object.keys(body).filter((key) => !(key in SDK_REQUEST_FIELDS));
  expect(unknown, 'fields the SDK does not know').to.deep.equal([]);
  for (const message of body.messages as MessageParam[]) {
    const fields = SDK_MESSAGE_FIELDS[message.role];
    expect(fields, `role ${message.role}`).to.not.equal(undefined);
    expect(
      Object.keys(message).filter((key) => !fields!.includes(key)),
      `fields of a ${message.role} message`,
    ).to.deep.equal([]);
  }
  for (const tool of (body.tools ?? []) as { type: string; function: Record<string, unknown> }[]) {
    expect(tool.type).to.equal('function');
    expect(Object.keys(tool.function).sort()).to.deep.equal(['description', 'name', 'parameters']);
  }
}

async function streamAndComplete(model: LanguageModel, request: LlmRequest): Promise<void> {
  let text = '';
  for await (const event of model.stream(request)) if (event.type === 'text') text += event.text;
  expect(text).to.equal('Hello.');
  expect((await model.complete({ ...request, jsonObject: true })).text).to.equal('Hello.');
}

/**
 * The chat-completions requests our adapter sends, captured on the wire, against the `openai`
 * SDK (6.49.0): their fields against its request types, and their URL, query and credentials
 * against what its own `OpenAI` and `AzureOpenAI` clients send for the same request. One file
 * per provider family in this folder (docs/providers.md).
 */
describe('conformance: OpenAI chat completions (openai SDK)', () => {
  let capture: Awaited<ReturnType<typeof startCapture>>;
  const savedEnv: Record<string, string | undefined> = {};

  before(async () => {
    capture = await startCapture();
    // The SDK's clients read these when an option is left out; the reference runs must not pick up a developer's.
    for (const name of [
      'OPENAI_BASE_URL',
      'OPENAI_API_KEY',
      'AZURE_OPENAI_ENDPOINT',
      'AZURE_OPENAI_API_KEY',
      'OPENAI_API_VERSION',
      'OPENAI_ORG_ID',
      'OPENAI_PROJECT_ID',
    ]) {
      savedEnv[name] = process.env[name];
      delete process.env[name];
    }
  });
  after(async () => {
    await capture.close();
    for (const [name, value] of Object.entries(savedEnv)) if (value !== undefined) process.env[name] = value;
  });
  beforeEach(() => (capture.requests.length = 0));

  const configAt = (url: string): LanguageModelsConfig => ({
    openai: { baseUrl: `${url}/v1`, apiKey: 'sk-conformance' },
    azureOpenai: { endpoint: `${url}/`, apiKey: 'azure-key', apiVersion: '2024-10-21', deployments: { 'gpt-4o-mini': 'mini-prod' }, deployment: null },
    local: { baseUrl: url, apiKey: 'local-key', model: 'Qwen/Qwen2.5-7B-Instruct' },
  });

  it("openai: fields the SDK knows, sent where and how the SDK's OpenAI client sends them", async () => {
    await streamAndComplete(languageModels(configAt(capture.url), 2_000)('openai'), FULL_REQUEST);
    const [streamed, whole] = capture.requests;
    for (const request of [streamed!, whole!]) {
      expectSdkShape(request.body);
      expect(request.body.model).to.equal('gpt-4o-mini');
    }
    expect(streamed!.body).to.deep.include({ stream: true, stream_options: { include_usage: true }, temperature: 0.4, max_tokens: 300 });
    expect(whole!.body).to.deep.include({ stream: false, response_format: { type: 'json_object' } });

    // The SDK itself, given the same body.
    const sdk = new OpenAI({ baseURL: `${capture.url}/v1`, apiKey: 'sk-conformance', maxRetries: 0 });
    await sdk.chat.completions.create(streamed!.body as unknown as StreamingParams).then(async (stream) => {
      for await (const chunk of stream) void chunk;
    });
    const reference = capture.requests[2]!;
    expect([streamed!.method, streamed!.path, streamed!.query]).to.deep.equal([reference.method, reference.path, reference.query]);
    expect(reference.path).to.equal('/v1/chat/completions');
    expect(wireHeaders(streamed!)).to.deep.equal(wireHeaders(reference));
    expect(streamed!.headers.authorization).to.equal('Bearer sk-conformance');
    expect(streamed!.body).to.deep.equal(reference.body);
  });

  it("azure_openai: the deployment path, api-version query and api-key header of the SDK's AzureOpenAI client", async () => {
    await streamAndComplete(languageModels(configAt(capture.url), 2_000)('azure_openai'), FULL_REQUEST);
    const ours = capture.requests.slice();
    for (const request of ours) expectSdkShape(request.body);

    // AzureOpenAI as Azure's quickstart uses it: endpoint, key, api-version, deployment.
    const sdk = new AzureOpenAI({ endpoint: `${capture.url}/`, apiKey: 'azure-key', apiVersion: '2024-10-21', deployment: 'mini-prod', maxRetries: 0 });
    const stream = await sdk.chat.completions.create(ours[0]!.body as unknown as StreamingParams);
    for await (const chunk of stream) void chunk;
    await sdk.chat.completions.create({ ...(ours[1]!.body as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming) });
    const [referenceStream, referenceWhole] = capture.requests.slice(ours.length);
    for (const [mine, theirs] of [
      [ours[0]!, referenceStream!],
      [ours[1]!, referenceWhole!],
    ] as const) {
      expect([mine.method, mine.path, mine.query]).to.deep.equal([theirs.method, theirs.path, theirs.query]);
      expect(wireHeaders(mine)).to.deep.equal(wireHeaders(theirs));
      expect(mine.body).to.deep.equal(theirs.body);
    }
    expect(ours[0]!.path).to.equal('/openai/deployments/mini-prod/chat/completions');
    expect(ours[0]!.query).to.deep.equal({ 'api-version': '2024-10-21' });
    expect(ours[0]!.headers['api-key']).to.equal('azure-key');
    expect(ours[0]!.headers.authorization).to.equal(undefined);

    // Without a deployment of its own, a model runs on the deployment named like it: the SDK's rule when no deployment is given.
    capture.requests.length = 0;
    await languageModels(configAt(capture.url), 2_000)('azure_openai').complete({ ...FULL_REQUEST, model: 'gpt-4o' });
    await new AzureOpenAI({ endpoint: capture.url, apiKey: 'azure-key', apiVersion: '2024-10-21', maxRetries: 0 }).chat.completions.create({
      ...(capture.requests[0]!.body as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming),
    });
    expect(capture.requests[0]!.path).to.equal(capture.requests[1]!.path).and.equal('/openai/deployments/gpt-4o/chat/completions');
  });

  it("local: an OpenAI-compatible server gets OpenAI's path and Bearer key, and the model under its own name", async () => {
    await streamAndComplete(languageModels(configAt(capture.url), 2_000)('local'), { ...FULL_REQUEST, model: 'local-chat' });
    const [streamed] = capture.requests;
    expectSdkShape(streamed!.body);
    expect(streamed!.body.model).to.equal('Qwen/Qwen2.5-7B-Instruct');
    const sdk = new OpenAI({ baseURL: `${capture.url}/v1`, apiKey: 'local-key', maxRetries: 0 });
    for await (const chunk of await sdk.chat.completions.create(streamed!.body as unknown as StreamingParams)) void chunk;
    const reference = capture.requests.at(-1)!;
    expect([streamed!.method, streamed!.path, streamed!.query, wireHeaders(streamed!)]).to.deep.equal([
      reference.method,
      reference.path,
      reference.query,
      wireHeaders(reference),
    ]);
  });
});
