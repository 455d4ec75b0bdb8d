import type { Voice } from './types';

/**
 * The voice an agent speaks with when its `voice.voice_id` is empty: the speech server's
 * default for the agent's `voice.language`. That is the first voice the server lists for the
 * language; else the first of the same base language (`en` for `en-IN`); else the first voice
 * that states no language (servers such as OpenAI's have multilingual voices without one);
 * else the server's first voice, so that the agent always speaks. Null only for a server
 * without voices. Languages compare without case (BCP 47 tags are case-insensitive).
 */
export function defaultVoiceFor(voices: readonly Voice[], language: string): Voice | null {
  const wanted = language.toLowerCase();
  const base = baseLanguage(wanted);
  return (
    voices.find((v) => v.language?.toLowerCase() === wanted) ??
    voices.find((v) => v.language !== null && baseLanguage(v.language.toLowerCase()) === base) ??
    voices.find((v) => v.language === null) ??
    voices[0] ??
    null
  );
}

/**
 * Whether the catalog marks `voice` as a default: the one an agent speaking the voice's own
 * language gets (the first listed for that language), or, for a voice that states no
 * language, the first such voice (the default for languages no voice states).
 */
export function isDefaultVoice(voices: readonly Voice[], voice: Voice): boolean {
  const language = voice.language?.toLowerCase() ?? null;
  return voices.find((v) => (v.language?.toLowerCase() ?? null) === language) === voice;
}

function baseLanguage(tag: string): string {
  return tag.split('-')[0]!;
}
