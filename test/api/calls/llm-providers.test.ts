import { expect } from 'chai';
import { startLanguageModelSimulator, type LanguageModelSimulator } from '../../../simulators/llm/simulator';
import { OPEN_HOURS, useCallStack, type CallStack } from '../../support/call-stack';
import { setPlan } from '../agents/helpers';

type Call = Record<string, unknown> & { id: string; status: string; hangup_reason: string; transcript: { role: string; text: string }[] };

/**
 * Each agent's language-model provider answered where it says (issue 28, docs/decisions/0190),
 * end to end: real API, workers, media service, FerretDB and Temporal; OpenAI, an Azure OpenAI
 * resource and a local server are three simulators, each with its own key and dialect.
 */
describe('calls on each language-model provider', function () {
  this.timeout(120_000);
  const script = (callee: CallStack['callee']) =>
    callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Where is my order?' }, { say: 'Okay thanks, bye.' }] });

  describe('with openai, azure_openai and local each configured', () => {
    let azure: LanguageModelSimulator;
    let local: LanguageModelSimulator;
    const stack = useCallStack({
      numberPrefix: '+9175',
      providersConfig: async (providers) => {
        azure = await startLanguageModelSimulator({ apiKey: 'azure-key', azureDeployments: ['mini-prod'] });
        local = await startLanguageModelSimulator({ apiKey: '' });
        return {
          ...providers.config,
          llm: {
            openai: { baseUrl: `${providers.llm.url}/v1`, apiKey: providers.llm.apiKey },
            azureOpenai: { endpoint: azure.url, apiKey: 'azure-key', apiVersion: '2024-10-21', deployments: { 'gpt-4o-mini': 'mini-prod' }, deployment: null },
            local: { baseUrl: local.url, apiKey: '', model: 'llama3.1:8b' },
          },
        };
      },
    });
    after(async () => {
      await azure?.close();
      await local?.close();
    });

    it('runs an agent on each provider, each conversation answered by its own service', async () => {
      await setPlan(stack.owner.workspaceId, 'growth');
      const openai = stack.providers.llm;
      const served: Record<string, LanguageModelSimulator> = { openai, azure_openai: azure, local };
      const replies: Record<string, string> = {
        openai: 'OpenAI here, your order ships today.',
        azure_openai: 'Azure here, your order ships today.',
        local: 'Local model here, your order ships today.',
      };
      for (const [provider, simulator] of Object.entries(served)) {
        const own = replies[provider]!;
        simulator.respond = (request) =>
          /bye/i.test(JSON.stringify(request.messages.at(-1))) ? { toolCalls: [{ name: 'end_call', arguments: {} }], text: 'Goodbye!' } : { text: own };
      }
      for (const [provider, model] of [
        ['openai', 'gpt-4.1-mini'],
        ['azure_openai', 'gpt-4o-mini'],
        ['local', 'local-chat'],
      ] as const) {
        const seen = Object.fromEntries(Object.entries(served).map(([name, simulator]) => [name, simulator.received.length]));
        const agent = await stack.createAgent({ welcome_message: 'Hello, this is Asha.', llm: { provider, model }, call: OPEN_HOURS });
        const placed = await stack.place<Call>(agent.id, script(stack.callee));
        const { call, events } = await stack.finished<Call>(placed.id);
        expect(
          events.filter((e) => e.type === 'error'),
          provider,
        ).to.deep.equal([]);
        expect(
          call.transcript.filter((t) => t.role === 'assistant').map((t) => t.text),
          provider,
        ).to.include(replies[provider]);
        for (const [name, simulator] of Object.entries(served)) {
          const received = simulator.received.slice(seen[name]);
          if (name !== provider) expect(received, `${provider}'s call reached ${name}`).to.deep.equal([]);
          else expect(received, provider).to.not.deep.equal([]);
        }
        const requests = served[provider]!.received.slice(seen[provider]);
        if (provider === 'openai') for (const r of requests) expect([r.route, r.body.model]).to.deep.equal([{ api: 'openai' }, 'gpt-4.1-mini']);
        if (provider === 'azure_openai')
          for (const r of requests) expect(r.route).to.deep.equal({ api: 'azure', deployment: 'mini-prod', apiVersion: '2024-10-21' });
        if (provider === 'local') for (const r of requests) expect([r.route, r.body.model]).to.deep.equal([{ api: 'openai' }, 'llama3.1:8b']);
      }
    });
  });

  describe('with azure_openai not configured', () => {
    const stack = useCallStack({
      numberPrefix: '+9176',
      providersConfig: (providers) => ({ ...providers.config, llm: { ...providers.config.llm!, azureOpenai: null } }),
    });

    it('saves the agent, and its call ends at the first reply with an error event naming the settings to set', async () => {
      await setPlan(stack.owner.workspaceId, 'growth');
      const agent = await stack.createAgent({ welcome_message: 'Hello, this is Asha.', llm: { provider: 'azure_openai', model: 'gpt-4o' }, call: OPEN_HOURS });
      const placed = await stack.place<Call>(agent.id, script(stack.callee));
      const { call, events } = await stack.finished<Call>(placed.id);
      const errors = events.filter((e) => e.type === 'error');
      expect(errors.map((e) => [e.message, e.level, e.data.provider])).to.deep.equal([
        [
          'language model: the language model provider is not configured: set LLM_AZURE_ENDPOINT and LLM_AZURE_API_KEY for azure_openai (a server setting)',
          'error',
          'language model',
        ],
      ]);
      expect(call.hangup_reason).to.equal('error');
    });
  });
});
