import type { Voice } from '../../contracts/voices';

/**
 * Speech synthesis as the service uses it: the catalog's voice list, and streaming synthesis
 * for the conversation engine.
 */
export interface Synthesizer {
  listVoices(): Promise<Voice[]>;
  /**
   * Speaks `request.text`: raw PCM, 16-bit little-endian mono at SYNTHESIS_SAMPLE_RATE
   * (OpenAI's `response_format: "pcm"`), yielded as it arrives. Buffers split the audio
   * anywhere, even inside a sample. Failing before any audio or while it streams is a
   * ProviderUnavailableError; an abort through `request.signal` closes the connection at once
   * and ends the iteration with the signal's reason (an `AbortError` unless given another).
   */
  synthesize(request: SpeechRequest): AsyncIterable<Buffer>;
}

/** The sample rate of synthesized audio (OpenAI's `pcm` format: 24 kHz). */
export const SYNTHESIS_SAMPLE_RATE = 24_000;

export interface SpeechRequest {
  text: string;
  /** A voice id from `listVoices` (an agent's `voice.voice_id`). */
  voice: string;
  model: string;
  /** Speaking rate, 1 is normal (OpenAI takes 0.25 to 4). */
  speed: number;
  /** Language code (`hi`, `en-IN`), sent as `lang_code`. */
  language: string;
  /** Stops the synthesis (barge-in, hang-up). */
  signal?: AbortSignal;
}

export type { Voice } from '../../contracts/voices';
