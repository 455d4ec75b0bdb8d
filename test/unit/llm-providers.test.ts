import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_AZURE_API_VERSION, languageModelsConfig, languageModelsEnv, loadConfig, type LanguageModelsConfig } from '../../config/env';
import { ProviderNotConfiguredError, ProviderRefusedError } from '../../providers/errors';
import { languageModels } from '../../providers';
import type { LanguageModel, LlmRequest, LlmStreamEvent } from '../../providers/llm/types';
import { startLanguageModelSimulator, type LanguageModelSimulator } from '../../simulators/llm/simulator';

/**
 * The language-model providers of the catalog, each at its own service (docs/decisions/0190):
 * their settings, where each provider's requests go, and the settings their refusals name.
 */
describe('language-model providers', () => {
  describe('settings', () => {
    it('reads each provider from its own group, with OpenAI at api.openai.com and a GA Azure api-version by default', () => {
      expect(languageModelsConfig({})).to.equal(null);
      expect(
        languageModelsConfig({
          LLM_OPENAI_API_KEY: 'sk-1',
          LLM_AZURE_ENDPOINT: 'https://res.openai.azure.com/',
          LLM_AZURE_API_KEY: 'az-1',
          LLM_LOCAL_BASE_URL: 'http://10.0.0.5:8000/',
        }),
      ).to.deep.equal({
        openai: { baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-1' },
        azureOpenai: { endpoint: 'https://res.openai.azure.com', apiKey: 'az-1', apiVersion: DEFAULT_AZURE_API_VERSION, deployments: {}, deployment: null },
        local: { baseUrl: 'http://10.0.0.5:8000', apiKey: '', model: null },
      });
      const all = {
        LLM_OPENAI_API_KEY: 'sk-1',
        LLM_OPENAI_BASE_URL: 'https://proxy.example.com/v1',
        LLM_AZURE_ENDPOINT: 'https://res.openai.azure.com',
        LLM_AZURE_API_KEY: 'az-1',
        LLM_AZURE_API_VERSION: '2025-01-01-preview',
        LLM_AZURE_DEPLOYMENTS: 'gpt-4o-mini=mini-prod, gpt-4o=4o-prod',
        LLM_AZURE_DEPLOYMENT: 'fallback',
        LLM_LOCAL_BASE_URL: 'http://10.0.0.5:8000',
        LLM_LOCAL_API_KEY: 'vllm-key',
        LLM_LOCAL_MODEL: 'meta-llama/Llama-3.1-8B-Instruct',
      };
      const config = languageModelsConfig(all);
      expect(config).to.deep.equal({
        openai: { baseUrl: 'https://proxy.example.com/v1', apiKey: 'sk-1' },
        azureOpenai: {
          endpoint: 'https://res.openai.azure.com',
          apiKey: 'az-1',
          apiVersion: '2025-01-01-preview',
          deployments: { 'gpt-4o-mini': 'mini-prod', 'gpt-4o': '4o-prod' },
          deployment: 'fallback',
        },
        local: { baseUrl: 'http://10.0.0.5:8000', apiKey: 'vllm-key', model: 'meta-llama/Llama-3.1-8B-Instruct' },
      });
      // The variables a launcher hands its processes read back as the same configuration.
      expect(languageModelsConfig(languageModelsEnv(config))).to.deep.equal(config);
      expect(loadConfig(all).providers.llm).to.deep.equal(config);
    });

    it('refuses half a group, a malformed deployment list, and the retired single-server LLM_BASE_URL', () => {
      expect(() => languageModelsConfig({ LLM_OPENAI_BASE_URL: 'https://proxy.example.com/v1' })).to.throw(
        'LLM_OPENAI_API_KEY must be set when LLM_OPENAI_BASE_URL is set',
      );
      expect(() => languageModelsConfig({ LLM_AZURE_ENDPOINT: 'https://res.openai.azure.com' })).to.throw(
        'LLM_AZURE_API_KEY must be set when LLM_AZURE_ENDPOINT is set',
      );
      expect(() => languageModelsConfig({ LLM_AZURE_API_KEY: 'k', LLM_AZURE_DEPLOYMENT: 'd' })).to.throw(
        'LLM_AZURE_ENDPOINT must be set when LLM_AZURE_API_KEY, LLM_AZURE_DEPLOYMENT are set',
      );
      expect(() => languageModelsConfig({ LLM_LOCAL_MODEL: 'llama3' })).to.throw('LLM_LOCAL_BASE_URL must be set when LLM_LOCAL_MODEL is set');
      expect(() => languageModelsConfig({ LLM_LOCAL_BASE_URL: 'ftp://x' })).to.throw('LLM_LOCAL_BASE_URL must be a http or https URL');
      const azure = { LLM_AZURE_ENDPOINT: 'https://res.openai.azure.com', LLM_AZURE_API_KEY: 'k' };
      expect(() => languageModelsConfig({ ...azure, LLM_AZURE_DEPLOYMENTS: 'gpt-4o-mini' })).to.throw(
        'LLM_AZURE_DEPLOYMENTS must be a comma list of model=deployment pairs',
      );
      expect(() => languageModelsConfig({ ...azure, LLM_AZURE_DEPLOYMENTS: 'gpt-4o=a,gpt-4o=b' })).to.throw('names model "gpt-4o" twice');
      expect(() => languageModelsConfig({ LLM_BASE_URL: 'https://api.openai.com' })).to.throw(
        /LLM_BASE_URL is replaced by .*LLM_OPENAI_API_KEY .*LLM_AZURE_ENDPOINT .*LLM_LOCAL_BASE_URL/,
      );
      expect(() => languageModelsConfig({ LLM_API_KEY: 'sk' })).to.throw('LLM_API_KEY is replaced');
    });
  });

  describe("each agent's provider goes where it says", () => {
    let openai: LanguageModelSimulator;
    let azure: LanguageModelSimulator;
    let local: LanguageModelSimulator;
    let config: LanguageModelsConfig;

    before(async () => {
      openai = await startLanguageModelSimulator({ apiKey: 'sk-openai' });
      azure = await startLanguageModelSimulator({ apiKey: 'az-key', azureDeployments: ['mini-prod', 'shared'] });
      local = await startLanguageModelSimulator({ apiKey: 'vllm-key' });
      config = {
        openai: { baseUrl: `${openai.url}/v1`, apiKey: 'sk-openai' },
        azureOpenai: { endpoint: azure.url, apiKey: 'az-key', apiVersion: '2024-10-21', deployments: { 'gpt-4o-mini': 'mini-prod' }, deployment: 'shared' },
        local: { baseUrl: local.url, apiKey: 'vllm-key', model: 'meta-llama/Llama-3.1-8B-Instruct' },
      };
    });
    after(async () => {
      await Promise.all([openai.close(), azure.close(), local.close()]);
    });

    const ask = (model: string): LlmRequest => ({ model, messages: [{ role: 'user', content: 'Say hello.' }], temperature: 0.2, maxTokens: 20 });
    const textOf = async (model: LanguageModel, request: LlmRequest) => {
      let text = '';
      for await (const event of model.stream(request) as AsyncIterable<LlmStreamEvent>) if (event.type === 'text') text += event.text;
      return text;
    };
    const failure = (model: LanguageModel, request: LlmRequest, streaming: boolean) =>
      (streaming ? textOf(model, request) : model.complete(request)).then(
        () => null,
        (e: unknown) => e as Error,
      );

    it("sends openai to OpenAI, azure_openai to the model's deployment, local under the server's own model name", async () => {
      const modelFor = languageModels(config, 2_000);
      openai.respond = () => ({ text: 'From OpenAI.' });
      azure.respond = () => ({ text: 'From Azure.' });
      local.respond = () => ({ text: 'From the local server.' });
      expect(await textOf(modelFor('openai'), ask('gpt-4.1-mini'))).to.equal('From OpenAI.');
      expect(await textOf(modelFor('azure_openai'), ask('gpt-4o-mini'))).to.equal('From Azure.');
      expect((await modelFor('azure_openai').complete(ask('gpt-4o'))).text).to.equal('From Azure.');
      expect((await modelFor('local').complete(ask('local-chat'))).text).to.equal('From the local server.');

      expect(openai.received.map((r) => [r.route, r.body.model])).to.deep.equal([[{ api: 'openai' }, 'gpt-4.1-mini']]);
      // Its own deployment for gpt-4o-mini, the one for all for gpt-4o; the catalog model in the body.
      expect(azure.received.map((r) => [r.route, r.body.model])).to.deep.equal([
        [{ api: 'azure', deployment: 'mini-prod', apiVersion: '2024-10-21' }, 'gpt-4o-mini'],
        [{ api: 'azure', deployment: 'shared', apiVersion: '2024-10-21' }, 'gpt-4o'],
      ]);
      expect(local.received.map((r) => [r.route, r.body.model])).to.deep.equal([[{ api: 'openai' }, 'meta-llama/Llama-3.1-8B-Instruct']]);
    });

    it('answers a provider that is not configured with the setting that configures it', async () => {
      const modelFor = languageModels({ openai: config.openai, azureOpenai: null, local: null }, 2_000);
      for (const streaming of [true, false]) {
        const err = await failure(modelFor('azure_openai'), ask('gpt-4o-mini'), streaming);
        expect(err).to.be.instanceOf(ProviderNotConfiguredError);
        expect(err!.message).to.equal(
          'the language model provider is not configured: set LLM_AZURE_ENDPOINT and LLM_AZURE_API_KEY for azure_openai (a server setting)',
        );
        expect((await failure(modelFor('local'), ask('local-chat'), streaming))!.message).to.include('set LLM_LOCAL_BASE_URL for local');
      }
      expect((await failure(languageModels(null, 2_000)('openai'), ask('gpt-4o-mini'), false))!.message).to.include('set LLM_OPENAI_API_KEY for openai');
    });

    it("names each provider's own setting when its service refuses: the key, the deployment, the api-version, the local model", async () => {
      const wrong = languageModels(
        {
          openai: { ...config.openai!, apiKey: 'sk-wrong' },
          azureOpenai: { ...config.azureOpenai!, apiKey: 'az-wrong' },
          local: { ...config.local!, apiKey: 'wrong' },
        },
        2_000,
      );
      for (const streaming of [true, false]) {
        const cases: [LanguageModel, string, string][] = [
          [wrong('openai'), 'gpt-4o-mini', 'server setting LLM_OPENAI_API_KEY'],
          [wrong('azure_openai'), 'gpt-4o-mini', 'server setting LLM_AZURE_API_KEY'],
          [wrong('local'), 'local-chat', 'server setting LLM_LOCAL_API_KEY'],
        ];
        for (const [model, id, setting] of cases) {
          const err = await failure(model, ask(id), streaming);
          expect(err, setting).to.be.instanceOf(ProviderRefusedError);
          expect(err!.message).to.include(`refused the credentials (${setting})`);
        }
        const noDeployment = languageModels({ ...config, azureOpenai: { ...config.azureOpenai!, deployments: {}, deployment: 'gone' } }, 2_000)('azure_openai');
        expect((await failure(noDeployment, ask('gpt-4o'), streaming))!.message).to.equal(
          "the language model provider refused the deployment 'gone' for the agent's model 'gpt-4o' (server setting LLM_AZURE_DEPLOYMENTS (or LLM_AZURE_DEPLOYMENT)): answered 404: The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
        );
        const badVersion = languageModels({ ...config, azureOpenai: { ...config.azureOpenai!, apiVersion: 'latest' } }, 2_000)('azure_openai');
        expect((await failure(badVersion, ask('gpt-4o'), streaming))!.message).to.include(
          "refused the api-version 'latest' (server setting LLM_AZURE_API_VERSION)",
        );
        const wrongEndpoint = languageModels({ ...config, azureOpenai: { ...config.azureOpenai!, endpoint: `${azure.url}/openai/v2` } }, 2_000)('azure_openai');
        expect((await failure(wrongEndpoint, ask('gpt-4o'), streaming))!.message, 'wrong endpoint').to.include(
          '(server settings LLM_AZURE_ENDPOINT, LLM_AZURE_API_VERSION): answered 404: Resource not found',
        );
      }
    });

    it('names LLM_LOCAL_MODEL, not the agent, when the local server does not know the model', async () => {
      // vLLM's answer for a model it does not serve: OpenAI's error shape with param `model`.
      const server = http.createServer((_req, res) =>
        res
          .writeHead(404, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'The model `llama` does not exist.', type: 'NotFoundError', param: 'model', code: 404 } })),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const model = languageModels(
          { openai: null, azureOpenai: null, local: { baseUrl: `http://127.0.0.1:${port}`, apiKey: '', model: 'llama' } },
          2_000,
        )('local');
        const err = await failure(model, ask('local-chat'), false);
        expect(err!.message).to.equal(
          "the language model provider refused the model 'llama' (server setting LLM_LOCAL_MODEL): answered 404: The model `llama` does not exist.",
        );
      } finally {
        server.close();
      }
    });
  });
});
