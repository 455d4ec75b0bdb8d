import type { LanguageModelsConfig, ProvidersConfig } from '../contracts/provider-settings';
import { ProviderNotConfiguredError, ProviderUnavailableError } from './errors';
import { PlivoTelephony } from './telephony/plivo';
import type { Telephony } from './telephony/types';
import { OpenAiCompatibleSpeech } from './tts/openai-compatible';
import type { Synthesizer } from './tts/types';
import { OpenAiCompatibleLanguageModel } from './llm/openai-compatible';
import { AzureOpenAiLanguageModel } from './llm/azure-openai';
import type { LanguageModel } from './llm/types';
import { StreamingTranscriber } from './stt/deepgram-style';
import type { Transcriber } from './stt/types';

/** The adapters of the outside services, one per interface. */
export interface Providers {
  telephony: Telephony;
  synthesizer: Synthesizer;
  /** The language model of a catalog provider id (`openai`, `azure_openai`, `local`), each at its own service. */
  languageModelFor(provider: string): LanguageModel;
  transcriber: Transcriber;
}

/**
 * Adapters for the configured services. A service without configuration gets an adapter
 * that fails every call (502), so the rest of the API works without it: the conversation's
 * services say which server setting is missing, telephony that it is unavailable.
 */
export function createProviders(config: ProvidersConfig | undefined): Providers {
  const timeoutMs = config?.timeoutMs ?? 5_000;
  const telephony = config?.telephony;
  const tts = config?.tts;
  const llm = config?.llm;
  const stt = config?.stt;
  return {
    telephony: telephony ? new PlivoTelephony({ ...telephony, timeoutMs }) : unconfiguredTelephony(),
    synthesizer: tts ? new OpenAiCompatibleSpeech({ ...tts, timeoutMs }) : unconfiguredSynthesizer(),
    languageModelFor: languageModels(llm ?? null, Math.max(timeoutMs, 10_000)),
    transcriber: stt ? new StreamingTranscriber({ ...stt, connectTimeoutMs: timeoutMs }) : unconfiguredTranscriber(),
  };
}

function unconfiguredTelephony(): Telephony {
  const fail = () => Promise.reject(new ProviderUnavailableError('telephony', 'not configured: set TELEPHONY_BASE_URL'));
  return { listNumbers: fail, getNumber: fail, createCall: fail, hangupCall: fail, transferCall: fail };
}

function unconfiguredSynthesizer(): Synthesizer {
  const unavailable = () => new ProviderNotConfiguredError('speech synthesis', 'TTS_BASE_URL');
  return {
    listVoices: () => Promise.reject(unavailable()),
    synthesize: () => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(unavailable()) }),
    }),
  };
}

/** The settings that configure each language-model provider, named when it is not configured. */
export const LANGUAGE_MODEL_SETTINGS: Readonly<Record<string, string>> = {
  openai: 'LLM_OPENAI_API_KEY',
  azure_openai: 'LLM_AZURE_ENDPOINT and LLM_AZURE_API_KEY',
  local: 'LLM_LOCAL_BASE_URL',
};

/**
 * Each catalog provider's adapter at its own service (docs/decisions/0190): OpenAI's API, an
 * Azure OpenAI resource's deployments, an OpenAI-compatible server under its own model name.
 * A provider left unconfigured answers every request with the setting that configures it.
 */
export function languageModels(config: LanguageModelsConfig | null, timeoutMs: number): (provider: string) => LanguageModel {
  const models = new Map<string, LanguageModel>();
  if (config?.openai)
    models.set(
      'openai',
      new OpenAiCompatibleLanguageModel({ ...config.openai, timeoutMs, apiKeySetting: 'LLM_OPENAI_API_KEY', baseUrlSetting: 'LLM_OPENAI_BASE_URL' }),
    );
  if (config?.azureOpenai) models.set('azure_openai', new AzureOpenAiLanguageModel({ ...config.azureOpenai, timeoutMs }));
  if (config?.local) {
    const { baseUrl, apiKey, model } = config.local;
    models.set(
      'local',
      new OpenAiCompatibleLanguageModel({
        baseUrl,
        apiKey,
        timeoutMs,
        apiKeySetting: 'LLM_LOCAL_API_KEY',
        baseUrlSetting: 'LLM_LOCAL_BASE_URL',
        serverModel: { name: model, setting: 'LLM_LOCAL_MODEL' },
      }),
    );
  }
  return (provider) => models.get(provider) ?? unconfiguredLanguageModel(provider);
}

function unconfiguredLanguageModel(provider: string): LanguageModel {
  const setting = LANGUAGE_MODEL_SETTINGS[provider];
  // "the language model provider is not configured: set LLM_AZURE_ENDPOINT and LLM_AZURE_API_KEY for azure_openai (a server setting)"
  const unavailable = () =>
    new ProviderNotConfiguredError(
      'language model',
      setting ? `${setting} for ${provider}` : `the settings of a provider the catalog does not know ('${provider}')`,
    );
  return {
    stream: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(unavailable()) }) }),
    complete: () => Promise.reject(unavailable()),
  };
}

function unconfiguredTranscriber(): Transcriber {
  return { open: () => Promise.reject(new ProviderNotConfiguredError('speech recognition', 'STT_BASE_URL')) };
}
