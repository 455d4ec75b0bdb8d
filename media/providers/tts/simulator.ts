import { startSimulatedService, type RunningSimulator, type SimulatorOptions } from '../simulated-service';
import type { Voice } from './types';

export interface SpeechSimulatorOptions extends SimulatorOptions {
  /** The key clients must send as `Authorization: Bearer`. */
  apiKey?: string;
  voices?: Voice[];
}

export interface SpeechSimulator extends RunningSimulator {
  apiKey: string;
  readonly voices: readonly Voice[];
}

export const SIMULATOR_API_KEY = 'simulator-api-key';

/** Voices of the local simulator: Indian Hindi and English voices, both genders. */
export const DEFAULT_SIMULATED_VOICES: Voice[] = [
  { id: 'anika', name: 'Anika', language: 'hi', gender: 'female' },
  { id: 'kabir', name: 'Kabir', language: 'hi', gender: 'male' },
  { id: 'meera', name: 'Meera', language: 'en-IN', gender: 'female' },
  { id: 'arjun', name: 'Arjun', language: 'en-IN', gender: 'male' },
  { id: 'tara', name: 'Tara', language: 'ta', gender: 'female' },
  { id: 'dev', name: 'Dev', language: 'mr', gender: 'male' },
];

/**
 * A stand-in for an OpenAI-compatible speech server on loopback: `GET /v1/audio/voices`
 * answers `{voices: [{id, name, language, gender}]}` to a client with the right Bearer key
 * (401 otherwise, in OpenAI's error shape).
 */
export async function startSpeechSimulator(options: SpeechSimulatorOptions = {}): Promise<SpeechSimulator> {
  const apiKey = options.apiKey ?? SIMULATOR_API_KEY;
  const voices = options.voices ?? DEFAULT_SIMULATED_VOICES;
  const simulator = await startSimulatedService((req, url) => {
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } };
    }
    if (req.method === 'GET' && url.pathname === '/v1/audio/voices') return { status: 200, body: { voices } };
    return { status: 404, body: { error: { message: `no route ${req.method} ${url.pathname}`, type: 'invalid_request_error' } } };
  }, options);
  return Object.assign(simulator, { apiKey, voices });
}
