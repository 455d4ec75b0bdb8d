/**
 * The outside services' settings as config/env.ts reads them from the environment and the
 * adapters in providers/ take them: the one shape both layers agree on.
 */

/** An OpenAI-compatible `/embeddings` endpoint (`EMBEDDINGS_BASE_URL` ends in `/v1`). */
export interface EmbeddingsConfig {
  baseUrl: string;
  /** Empty when the server needs none. */
  apiKey: string;
  model: string;
}

/**
 * Outside services behind adapters (providers/). A service without a base URL is not
 * configured: its endpoints answer 502 saying so. `npm start` runs a local simulator for each
 * one left unset and hands its address (and credentials) to the services.
 */
export interface ProvidersConfig {
  /** Plivo's REST API (https://api.plivo.com), HTTP Basic auth with the account's id and token. */
  telephony: { baseUrl: string; authId: string; authToken: string } | null;
  /**
   * An OpenAI-compatible speech server; empty key: none sent. `flavour` (TTS_FLAVOUR, default
   * `auto`): OpenAI itself (a fixed voice list), Kokoro-FastAPI or Speaches (they list voices),
   * or `auto`, told from the address and the voice list paths (decision 0181).
   */
  tts: { baseUrl: string; apiKey: string; flavour?: 'auto' | 'openai' | 'kokoro' | 'speaches' } | null;
  /** The language-model providers of the catalog, each at its own service; null: none configured. */
  llm: LanguageModelsConfig | null;
  /** A streaming speech-recognition server speaking the `/v1/listen` and `/v2/listen` WebSocket protocols (`STT_BASE_URL`). */
  stt: { baseUrl: string; apiKey: string } | null;
  /** How long an adapter waits for an answer before the API answers 502. */
  timeoutMs: number;
  /**
   * A Razorpay-style payment gateway (https://api.razorpay.com): HTTP Basic auth with the key id
   * and secret. `webhookSecret` (`RAZORPAY_WEBHOOK_SECRET`) is the secret of the webhook set in
   * Razorpay's dashboard, which signs its events; none: every webhook is refused (403).
   */
  payments?: { baseUrl: string; keyId: string; keySecret: string; webhookSecret?: string | null } | null;
}

/**
 * Where each language-model provider of the catalog (domain/agents/catalog.ts) is answered
 * (docs/decisions/0190). A provider left null is not configured: its agents' calls end with an
 * `error` event naming the setting, their analytics record it.
 */
export interface LanguageModelsConfig {
  /** `openai`: OpenAI's API (`LLM_OPENAI_API_KEY`; `LLM_OPENAI_BASE_URL` for a proxy, default https://api.openai.com/v1). */
  openai: { baseUrl: string; apiKey: string } | null;
  /** `azure_openai`: an Azure OpenAI resource's deployments (`LLM_AZURE_*`). */
  azureOpenai: AzureOpenAiConfig | null;
  /** `local`: any OpenAI-compatible server (vLLM, llama.cpp, Ollama; `LLM_LOCAL_*`); empty key: none sent. */
  local: { baseUrl: string; apiKey: string; model: string | null } | null;
}

export interface AzureOpenAiConfig {
  /** The resource's endpoint, `https://<resource>.openai.azure.com` (`LLM_AZURE_ENDPOINT`). */
  endpoint: string;
  /** Sent as the `api-key` header (`LLM_AZURE_API_KEY`). */
  apiKey: string;
  /** The `api-version` query of every request (`LLM_AZURE_API_VERSION`). */
  apiVersion: string;
  /** The deployment of each catalog model (`LLM_AZURE_DEPLOYMENTS=gpt-4o-mini=mini-prod,...`). */
  deployments: Record<string, string>;
  /** The deployment of a model not in `deployments` (`LLM_AZURE_DEPLOYMENT`); null: one named like the model. */
  deployment: string | null;
}
