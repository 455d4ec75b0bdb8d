import { AzureOpenAI, type APIError } from 'openai';
import type { AzureOpenAiConfig } from '../../contracts/provider-settings';
import { ChatCompletionsLanguageModel, type ChatTarget, type RefusedSetting } from './openai-compatible';
import type { LlmRequest } from './types';

export interface AzureOpenAiLanguageModelOptions extends AzureOpenAiConfig {
  timeoutMs: number;
}

/**
 * Azure OpenAI: the agent's catalog model runs on a deployment of the resource, at
 * `<endpoint>/openai/deployments/<deployment>/chat/completions?api-version=<version>` with the
 * key in an `api-key` header. The `openai` package's own `AzureOpenAI` client builds that URL
 * and header (one client per deployment), so the wire is the SDK's, not ours.
 */
export class AzureOpenAiLanguageModel extends ChatCompletionsLanguageModel {
  protected readonly apiKeySetting = 'LLM_AZURE_API_KEY';
  private readonly clients = new Map<string, AzureOpenAI>();

  constructor(private readonly options: AzureOpenAiLanguageModelOptions) {
    super(options.timeoutMs);
  }

  /** The deployment serving a catalog model: its own (LLM_AZURE_DEPLOYMENTS), the one for all (LLM_AZURE_DEPLOYMENT), else one named like the model. */
  deploymentOf(model: string): string {
    return this.options.deployments[model] ?? this.options.deployment ?? model;
  }

  protected target(model: string): ChatTarget {
    const deployment = this.deploymentOf(model);
    let client = this.clients.get(deployment);
    if (!client) {
      client = new AzureOpenAI({
        // baseURL rather than `endpoint`: the SDK would otherwise take OPENAI_BASE_URL from the
        // environment as the base and refuse the endpoint beside it. The same URL it builds.
        baseURL: `${this.options.endpoint.replace(/\/+$/, '')}/openai`,
        apiKey: this.options.apiKey,
        apiVersion: this.options.apiVersion,
        deployment,
        timeout: Math.max(1, Math.round(this.timeoutMs)),
        maxRetries: 0,
        organization: null,
        project: null,
      });
      this.clients.set(deployment, client);
    }
    return { client, model };
  }

  /**
   * Azure's own refusals: a deployment the resource does not have (`DeploymentNotFound`) is the
   * operator's deployment settings; a bare 404 ("Resource not found": no api-version, or an
   * endpoint without this route) the endpoint and version.
   */
  protected override refusedSetting(err: APIError, request: LlmRequest): RefusedSetting | null {
    if (err.code === 'DeploymentNotFound') {
      return {
        refused: `the deployment '${this.deploymentOf(request.model)}' for the agent's model '${request.model}'`,
        setting: 'server setting LLM_AZURE_DEPLOYMENTS (or LLM_AZURE_DEPLOYMENT)',
      };
    }
    if (err.status === 404) return { refused: 'the chat-completions path', setting: 'server settings LLM_AZURE_ENDPOINT, LLM_AZURE_API_VERSION' };
    if (err.status === 400 && /api.?version/i.test(err.message))
      return { refused: `the api-version '${this.options.apiVersion}'`, setting: 'server setting LLM_AZURE_API_VERSION' };
    return null;
  }
}
