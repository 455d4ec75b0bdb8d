/** A voice of the speech service, as its voice list gives it (providers/tts) and a simulator serves it. */
export interface Voice {
  /** What an agent stores as `voice.voice_id` and the speech request sends as `voice`. */
  id: string;
  name: string;
  /** Language code (`hi`, `en-IN`, ...) when the service says. */
  language: string | null;
  gender: string | null;
}
