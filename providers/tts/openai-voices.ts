import type { Voice } from './types';

/**
 * OpenAI's built-in speech voices. OpenAI's API has no voice list: the voices are the ones its
 * documentation and the official `openai` SDK name for `SpeechCreateParams.voice` (6.49.0: the
 * type's literals `alloy`, `ash`, `ballad`, `coral`, `echo`, `sage`, `shimmer`, `verse`,
 * `marin`, `cedar`, and `fable`, `onyx`, `nova` named in its documentation). Every voice is
 * multilingual (it speaks the language of the text), so none states a language, and the first,
 * `alloy`, is the default for every language: it is the one every catalog model (`tts-1`,
 * `tts-1-hd`, `gpt-4o-mini-tts`) speaks with (decision 0181). OpenAI names no genders.
 */
export const OPENAI_VOICE_IDS = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const;

export const OPENAI_VOICES: readonly Voice[] = OPENAI_VOICE_IDS.map((id) => ({
  id,
  name: id.charAt(0).toUpperCase() + id.slice(1),
  language: null,
  gender: null,
}));
