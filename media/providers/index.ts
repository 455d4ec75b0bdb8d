import type { ProvidersConfig } from '../../config/env';
import { ProviderUnavailableError } from './errors';
import { PlivoTelephony } from './telephony/plivo';
import type { Telephony } from './telephony/types';
import { OpenAiCompatibleSpeech } from './tts/openai-compatible';
import type { Synthesizer } from './tts/types';

/** The adapters of the outside services, one per interface. */
export interface Providers {
  telephony: Telephony;
  synthesizer: Synthesizer;
}

/**
 * Adapters for the configured services. A service without configuration gets an adapter
 * that fails every call as unavailable (502), so the rest of the API works without it.
 */
export function createProviders(config: ProvidersConfig | undefined): Providers {
  const timeoutMs = config?.timeoutMs ?? 5_000;
  const telephony = config?.telephony;
  const tts = config?.tts;
  return {
    telephony: telephony ? new PlivoTelephony({ ...telephony, timeoutMs }) : unconfiguredTelephony(),
    synthesizer: tts ? new OpenAiCompatibleSpeech({ ...tts, timeoutMs }) : unconfiguredSynthesizer(),
  };
}

function unconfiguredTelephony(): Telephony {
  const fail = () => Promise.reject(new ProviderUnavailableError('telephony', 'not configured: set TELEPHONY_BASE_URL'));
  return { listNumbers: fail, getNumber: fail, createCall: fail, hangupCall: fail };
}

function unconfiguredSynthesizer(): Synthesizer {
  return { listVoices: () => Promise.reject(new ProviderUnavailableError('speech synthesis', 'not configured: set TTS_BASE_URL')) };
}
