import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderRefusedError, ProviderUnavailableError } from '../../providers/errors';
import { OpenAiCompatibleLanguageModel } from '../../providers/llm/openai-compatible';
import { defaultRespond, startLanguageModelSimulator, type LanguageModelSimulator } from '../../simulators/llm/simulator';
import type { ChatMessage, LlmRequest, LlmStreamEvent, LlmTool } from '../../providers/llm/types';

/** The language-model adapter against the simulator over loopback, and the simulator's wire format and built-in agent. */
describe('OpenAI-compatible language model', () => {
  let simulator: LanguageModelSimulator;
  let llm: OpenAiCompatibleLanguageModel;

  before(async () => {
    simulator = await startLanguageModelSimulator();
    llm = new OpenAiCompatibleLanguageModel({ baseUrl: simulator.url, apiKey: simulator.apiKey, timeoutMs: 2_000 });
  });
  beforeEach(() => {
    simulator.respond = defaultRespond;
    simulator.latencyMs = 0;
    simulator.tokenIntervalMs = 5;
    simulator.mode = 'normal';
    simulator.requests.length = 0;
    simulator.interruptedStreams.length = 0;
  });
  after(() => simulator.close());

  const lookupOrder: LlmTool = {
    name: 'lookup_order',
    description: 'Finds an order by its id',
    parameters: { type: 'object', properties: { order_id: { type: 'string' }, verbose: { type: 'boolean' } }, required: ['order_id', 'verbose'] },
  };
  const endCall: LlmTool = { name: 'end_call', description: 'Ends the call', parameters: { type: 'object', properties: {} } };
  const ask = (messages: ChatMessage[], extra: Partial<LlmRequest> = {}): LlmRequest => ({
    model: 'local-chat',
    messages,
    temperature: 0.4,
    maxTokens: 300,
    ...extra,
  });
  const user = (content: string): ChatMessage => ({ role: 'user', content });

  describe('streaming', () => {
    it('streams the text in several pieces that join to the reply, then the usage', async () => {
      simulator.respond = () => ({ text: 'Namaste! Your order ships tomorrow, by noon.' });
      const events = await collect(llm.stream(ask([user('Where is my order?')])));
      const texts = events.filter((e) => e.type === 'text');
      expect(texts).to.have.length(10);
      expect(texts.map((e) => e.text).join('')).to.equal('Namaste! Your order ships tomorrow, by noon.');
      // Words and punctuation marks: 5 in the question, 10 in the reply.
      expect(events.at(-1)).to.deep.equal({ type: 'usage', usage: { inputTokens: 5, outputTokens: 10 } });
      expect(events.filter((e) => e.type !== 'text')).to.have.length(1);
    });

    it('sends the first piece after the latency and each piece as soon as it comes', async () => {
      simulator.respond = () => ({ text: 'one two three four five six seven eight nine ten' });
      simulator.latencyMs = 200;
      simulator.tokenIntervalMs = 40;
      const started = Date.now();
      const arrivals: number[] = [];
      for await (const event of llm.stream(ask([user('count')]))) if (event.type === 'text') arrivals.push(Date.now() - started);
      expect(arrivals).to.have.length(10);
      expect(arrivals[0]).to.be.at.least(200);
      expect(arrivals.at(-1)! - arrivals[0]!).to.be.at.least(300);

      simulator.respond = () => ({ text: 'late', latencyMs: 350 });
      const again = Date.now();
      const [first] = await collect(llm.stream(ask([user('count')])));
      expect(first).to.deep.equal({ type: 'text', text: 'late' });
      expect(Date.now() - again).to.be.at.least(350);
    });

    it('joins streamed tool-call arguments by index and yields each call whole after the text', async () => {
      simulator.respond = () => ({
        text: 'Let me check.',
        toolCalls: [
          { name: 'lookup_order', arguments: { order_id: 'A-17', verbose: true } },
          { name: 'end_call', arguments: {} },
        ],
      });
      const events = await collect(llm.stream(ask([user('Where is A-17?')], { tools: [lookupOrder, endCall] })));
      expect(events.map((e) => e.type)).to.deep.equal(['text', 'text', 'text', 'text', 'tool_call', 'tool_call', 'usage']);
      const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
      expect(calls.map((c) => c.name)).to.deep.equal(['lookup_order', 'end_call']);
      expect(JSON.parse(calls[0]!.arguments)).to.deep.equal({ order_id: 'A-17', verbose: true });
      expect(calls[1]!.arguments).to.equal('{}');
      expect(calls[0]!.id).to.match(/^call_/);
      expect(calls[0]!.id).to.not.equal(calls[1]!.id);
      const usage = events.at(-1);
      expect(usage?.type === 'usage' && usage.usage.outputTokens).to.be.greaterThan(4);
    });

    it('sends the model, temperature, max_tokens, tools and messages as given', async () => {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'You are Asha from Acme.' },
        user('Where is A-17?'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'lookup_order', arguments: '{"order_id":"A-17"}' }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"status":"shipped"}' },
      ];
      await collect(llm.stream({ model: 'gpt-4o-mini', messages, tools: [lookupOrder], temperature: 0.7, maxTokens: 123 }));
      expect(simulator.requests).to.have.length(1);
      const sent = simulator.requests[0]!;
      expect(sent).to.include({ model: 'gpt-4o-mini', temperature: 0.7, max_tokens: 123, stream: true });
      expect(sent.stream_options).to.deep.equal({ include_usage: true });
      expect(sent.tools).to.deep.equal([
        { type: 'function', function: { name: 'lookup_order', description: 'Finds an order by its id', parameters: lookupOrder.parameters } },
      ]);
      expect(sent.messages).to.deep.equal([
        messages[0],
        messages[1],
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"A-17"}' } }],
        },
        messages[3],
      ]);

      await collect(llm.stream(ask([user('hi')])));
      expect(simulator.requests[1]).to.not.have.property('tools');
    });

    it('cuts the reply at max_tokens', async () => {
      simulator.respond = () => ({ text: 'One two three four five six.', toolCalls: [{ name: 'end_call', arguments: {} }] });
      const events = await collect(llm.stream(ask([user('count')], { maxTokens: 4 })));
      expect(texts(events)).to.equal('One two three four');
      expect(events.some((e) => e.type === 'tool_call')).to.equal(false);
      expect(events.at(-1)).to.deep.equal({ type: 'usage', usage: { inputTokens: 1, outputTokens: 4 } });
      const whole = await llm.complete(ask([user('count')], { maxTokens: 2 }));
      expect(whole).to.deep.equal({ text: 'One two', toolCalls: [], usage: { inputTokens: 1, outputTokens: 2 } });
    });
  });

  describe('aborts', () => {
    const longReply = () => ({ text: Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ') });

    it('stops promptly when aborted mid-stream, and the server stops writing', async () => {
      simulator.respond = longReply;
      simulator.tokenIntervalMs = 30;
      const controller = new AbortController();
      let pieces = 0;
      let abortedAt = 0;
      const err = await (async () => {
        for await (const event of llm.stream(ask([user('talk')], { signal: controller.signal }))) {
          if (event.type === 'text' && ++pieces === 2) {
            abortedAt = Date.now();
            controller.abort();
          }
        }
      })().catch((e: unknown) => e);
      expect(Date.now() - abortedAt).to.be.below(200);
      expect((err as Error).name).to.equal('AbortError');
      expect(pieces).to.equal(2);
      await until(() => simulator.interruptedStreams.length === 1);
      const [interrupted] = simulator.interruptedStreams;
      expect(interrupted!.piecesPlanned).to.equal(40);
      expect(interrupted!.piecesSent).to.be.within(2, 10);
    });

    it('closes the connection when the consumer stops reading', async () => {
      simulator.respond = longReply;
      simulator.tokenIntervalMs = 30;
      for await (const event of llm.stream(ask([user('talk')]))) if (event.type === 'text') break;
      await until(() => simulator.interruptedStreams.length === 1);
      expect(simulator.interruptedStreams[0]!.piecesSent).to.be.below(10);
    });

    it('rejects promptly when aborted before the first token, streaming or not', async () => {
      simulator.latencyMs = 1_000;
      for (const run of [
        (signal: AbortSignal) => collect(llm.stream(ask([user('hi')], { signal }))),
        (signal: AbortSignal) => llm.complete(ask([user('hi')], { signal })),
      ]) {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 50);
        const started = Date.now();
        const err = await run(controller.signal).catch((e: unknown) => e);
        expect((err as Error).name).to.equal('AbortError');
        expect(Date.now() - started).to.be.below(500);
      }
      const aborted = AbortSignal.abort();
      expect(((await llm.complete(ask([user('hi')], { signal: aborted })).catch((e: unknown) => e)) as Error).name).to.equal('AbortError');
    });
  });

  describe('failures', () => {
    async function failure(model: OpenAiCompatibleLanguageModel, streaming: boolean): Promise<unknown> {
      return (streaming ? collect(model.stream(ask([user('hi')]))) : model.complete(ask([user('hi')]))).catch((e: unknown) => e);
    }

    it('reports a server that is down and a 500 as the provider being unavailable: retry in a moment', async () => {
      const down = await startLanguageModelSimulator();
      await down.close();
      for (const streaming of [true, false]) {
        const err = await failure(new OpenAiCompatibleLanguageModel({ baseUrl: down.url, apiKey: 'k', timeoutMs: 1_000 }), streaming);
        expect(err).to.be.instanceOf(ProviderUnavailableError);
        expect((err as ProviderUnavailableError).service).to.equal('language model');
        expect((err as Error).message).to.match(/connection failed: ECONNREFUSED.*retry in a moment$/);
      }
      simulator.mode = 'failing';
      for (const streaming of [true, false]) {
        const err = await failure(llm, streaming);
        expect(err).to.be.instanceOf(ProviderUnavailableError);
        expect((err as Error).message).to.match(/answered 500: simulated provider failure.*retry in a moment$/);
      }
    });

    it('reports a wrong key and an unknown model as refusals naming the setting to fix, without asking to retry', async () => {
      const wrongKey = new OpenAiCompatibleLanguageModel({ baseUrl: simulator.url, apiKey: 'wrong', timeoutMs: 1_000, apiKeySetting: 'LLM_OPENAI_API_KEY' });
      for (const streaming of [true, false]) {
        const err = await failure(wrongKey, streaming);
        expect(err).to.be.instanceOf(ProviderRefusedError);
        expect((err as Error).message).to.equal(
          'the language model provider refused the credentials (server setting LLM_OPENAI_API_KEY): answered 401: Incorrect API key provided',
        );
      }
      // OpenAI's answer to a model the account cannot use.
      const server = http.createServer((_req, res) =>
        res
          .writeHead(404, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'The model `m` does not exist', type: 'invalid_request_error', param: null, code: 'model_not_found' } })),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const noModel = new OpenAiCompatibleLanguageModel({
          baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          apiKey: 'k',
          timeoutMs: 1_000,
        });
        for (const streaming of [true, false]) {
          const err = await failure(noModel, streaming);
          expect(err).to.be.instanceOf(ProviderRefusedError);
          expect((err as Error).message).to.match(
            /^the language model provider refused the agent's model '[^']+' \(agent setting llm\.model\): answered 404: The model `m` does not exist$/,
          );
        }
      } finally {
        server.close();
      }
    });

    it('gives up on a server that stays silent: no answer, or no first token', async () => {
      const impatient = new OpenAiCompatibleLanguageModel({ baseUrl: simulator.url, apiKey: simulator.apiKey, timeoutMs: 300 });
      simulator.mode = 'hanging';
      for (const streaming of [true, false]) {
        const started = Date.now();
        const err = await failure(impatient, streaming);
        expect(err).to.be.instanceOf(ProviderUnavailableError);
        expect((err as Error).message).to.match(/no answer within 300 ms/);
        expect(Date.now() - started).to.be.within(290, 900);
      }
      // The stream's headers come at once; the first token does not.
      simulator.mode = 'normal';
      simulator.latencyMs = 2_000;
      const started = Date.now();
      const err = await failure(impatient, true);
      expect((err as Error).message).to.match(/no answer within 300 ms/);
      expect(Date.now() - started).to.be.below(900);
    });
  });

  describe('complete()', () => {
    it('asks for a JSON object and returns the text, tool calls and usage', async () => {
      simulator.respond = (request) => ({ text: JSON.stringify({ format: request.response_format?.type ?? 'none' }) });
      const json = await llm.complete({ ...ask([user('Summarise')]), jsonObject: true });
      expect(JSON.parse(json.text)).to.deep.equal({ format: 'json_object' });
      expect(simulator.requests[0]).to.deep.include({ response_format: { type: 'json_object' }, stream: false, max_tokens: 300, temperature: 0.4 });
      expect(json.usage).to.deep.equal({ inputTokens: 1, outputTokens: 11 });
      expect(JSON.parse((await llm.complete(ask([user('Summarise')]))).text)).to.deep.equal({ format: 'none' });

      simulator.respond = () => ({ toolCalls: [{ name: 'lookup_order', arguments: { order_id: 'B-2' } }] });
      const withCall = await llm.complete(ask([user('B-2?')], { tools: [lookupOrder] }));
      expect(withCall.text).to.equal('');
      expect(withCall.toolCalls).to.have.length(1);
      expect(withCall.toolCalls[0]).to.include({ name: 'lookup_order', arguments: '{"order_id":"B-2"}' });
    });
  });

  describe('the simulator’s built-in agent', () => {
    it('echoes the caller in two sentences, and greets when nobody spoke yet', async () => {
      expect(texts(await collect(llm.stream(ask([{ role: 'system', content: 'Be brief.' }, user('I want to book a table.')]))))).to.equal(
        'You said: I want to book a table. How can I help further?',
      );
      expect((await llm.complete(ask([{ role: 'system', content: 'Be brief.' }]))).text).to.equal('Hello! How can I help you today?');
    });

    it('calls end_call when the caller says goodbye and end_call is offered', async () => {
      for (const goodbye of ['Okay, bye!', 'Thanks, that’s all', 'Theek hai, alvida']) {
        const events = await collect(llm.stream(ask([user(goodbye)], { tools: [lookupOrder, endCall] })));
        expect(texts(events)).to.equal('Thank you for calling. Goodbye!');
        const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
        expect(calls.map((c) => [c.name, c.arguments])).to.deep.equal([['end_call', '{}']]);
      }
      // Without end_call on offer the goodbye is echoed; "bystander" is no goodbye.
      expect((await llm.complete(ask([user('bye')]))).text).to.equal('You said: bye. How can I help further?');
      expect((await llm.complete(ask([user('I live on Byers street')], { tools: [endCall] }))).toolCalls).to.deep.equal([]);
    });

    it('answers a yes/no question by whether the caller’s last turn said goodbye', async () => {
      const question: ChatMessage = { role: 'system', content: 'Is the conversation over? Answer Yes or No.' };
      const conversation = (last: string): ChatMessage[] => [
        { role: 'system', content: 'You are Asha.' },
        user('Hi'),
        { role: 'assistant', content: 'Hello!' },
        user(last),
        { role: 'assistant', content: 'Sure.' },
        question,
      ];
      expect((await llm.complete(ask(conversation('ok goodbye')))).text).to.equal('Yes');
      expect((await llm.complete(ask(conversation('what are your hours?')))).text).to.equal('No');
      const transcript = (last: string) => user(`user: hello\nassistant: Hi!\ncaller: ${last}\nassistant: Okay.\nDid the caller finish? Answer yes or no.`);
      expect((await llm.complete(ask([transcript('that is all, bye')]))).text).to.equal('Yes');
      expect((await llm.complete(ask([transcript('one more thing')]))).text).to.equal('No');
    });

    it('quotes a tool result, calls a tool the caller names, and answers JSON requests with an object', async () => {
      const afterTool: ChatMessage[] = [
        user('Where is A-17?'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'lookup_order', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"status":"shipped"}' },
      ];
      expect((await llm.complete(ask(afterTool))).text).to.equal('The tool answered: {"status":"shipped"}.');
      expect((await llm.complete(ask([afterTool[0]!, afterTool[1]!, { role: 'tool', tool_call_id: 'call_1', content: 'x'.repeat(300) }]))).text).to.equal(
        `The tool answered: ${'x'.repeat(200)}.`,
      );

      const named = await llm.complete(ask([user('Please lookup order A-17')], { tools: [endCall, lookupOrder] }));
      expect(named.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).to.deep.equal([
        ['lookup_order', { order_id: 'Please lookup order A-17' }],
      ]);

      expect(JSON.parse((await llm.complete({ ...ask([user('Classify this call')]), jsonObject: true })).text)).to.deep.equal({});
      const summary = JSON.parse(
        (await llm.complete({ ...ask([{ role: 'system', content: 'Write a summary.' }, user('caller wanted a refund')]), jsonObject: true })).text,
      ) as unknown;
      expect(summary).to.deep.equal({ summary: 'Simulated summary: caller wanted a refund' });
    });
  });

  describe('the simulator’s wire format', () => {
    const post = (body: unknown, key = simulator.apiKey) =>
      fetch(`${simulator.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });

    it('streams chat.completion.chunk events, the finish reason, a usage chunk and [DONE]', async () => {
      simulator.respond = () => ({ text: 'Hello there, friend.' });
      const res = await post({
        model: 'local-chat',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2,
        stream: true,
        stream_options: { include_usage: true },
      });
      expect(res.headers.get('content-type')).to.equal('text/event-stream');
      const events = (await res.text()).split('\n\n').filter(Boolean);
      expect(events.every((e) => e.startsWith('data: '))).to.equal(true);
      expect(events.at(-1)).to.equal('data: [DONE]');
      const chunks = events.slice(0, -1).map(
        (e) =>
          JSON.parse(e.slice(6)) as {
            object: string;
            model: string;
            choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
            usage: unknown;
          },
      );
      expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'local-chat')).to.equal(true);
      expect(chunks[0]!.choices[0]!.delta).to.include({ role: 'assistant', content: '' });
      expect(chunks.slice(1, 3).map((c) => c.choices[0]!.delta.content)).to.deep.equal(['Hello', ' there']);
      expect(chunks[3]!.choices[0]).to.deep.include({ delta: {}, finish_reason: 'length' });
      expect(chunks[4]).to.deep.include({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } });
      expect(chunks.slice(0, 4).every((c) => c.usage === null)).to.equal(true);
    });

    it('lists models, and refuses a wrong key and a malformed body in OpenAI’s error shape', async () => {
      const models = (await (await fetch(`${simulator.url}/v1/models`, { headers: { Authorization: `Bearer ${simulator.apiKey}` } })).json()) as {
        object: string;
        data: { id: string }[];
      };
      expect(models.object).to.equal('list');
      expect(models.data.map((m) => m.id)).to.include('local-chat');
      const refused = await post({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }] }, 'wrong');
      expect(refused.status).to.equal(401);
      expect(((await refused.json()) as { error: unknown }).error).to.deep.include({ type: 'invalid_request_error', code: 'invalid_api_key' });
      const malformed = await post({ model: 'local-chat', messages: [] });
      expect(malformed.status).to.equal(400);
      expect(((await malformed.json()) as { error: { message: string } }).error.message).to.match(/messages/);
      expect(simulator.requests).to.have.length(0);
    });
  });
});

async function collect(events: AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const all: LlmStreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

function texts(events: LlmStreamEvent[]): string {
  return events.map((e) => (e.type === 'text' ? e.text : '')).join('');
}

async function until(condition: () => boolean, timeoutMs = 1_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not come true in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
