/**
 * Speech synthesis as the service uses it. For now the catalog's voice list; the calls issue
 * adds streaming synthesis to this interface.
 */
export interface Synthesizer {
  listVoices(): Promise<Voice[]>;
}

export interface Voice {
  /** What an agent stores as `voice.voice_id` and the speech request sends as `voice`. */
  id: string;
  name: string;
  /** Language code (`hi`, `en-IN`, ...) when the service says. */
  language: string | null;
  gender: string | null;
}
