import type { ProvidersConfig } from '../config/env';
import { ProviderNotConfiguredError, ProviderUnavailableError } from './errors';
import { PlivoTelephony } from './telephony/plivo';
import type { Telephony } from './telephony/types';
import { OpenAiCompatibleSpeech } from './tts/openai-compatible';
import type { Synthesizer } from './tts/types';
import { OpenAiCompatibleLanguageModel } from './llm/openai-compatible';
import type { LanguageModel } from './llm/types';
import { StreamingTranscriber } from './stt/deepgram-style';
import type { Transcriber } from './stt/types';

/** The adapters of the outside services, one per interface. */
export interface Providers {
  telephony: Telephony;
  synthesizer: Synthesizer;
  /** One OpenAI-compatible server answers every language-model provider of the catalog. */
  languageModel: LanguageModel;
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
    languageModel: llm ? new OpenAiCompatibleLanguageModel({ ...llm, timeoutMs: Math.max(timeoutMs, 10_000) }) : unconfiguredLanguageModel(),
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

function unconfiguredLanguageModel(): LanguageModel {
  const unavailable = () => new ProviderNotConfiguredError('language model', 'LLM_BASE_URL');
  return {
    stream: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(unavailable()) }) }),
    complete: () => Promise.reject(unavailable()),
  };
}

function unconfiguredTranscriber(): Transcriber {
  return { open: () => Promise.reject(new ProviderNotConfiguredError('speech recognition', 'STT_BASE_URL')) };
}
