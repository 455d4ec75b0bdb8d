/**
 * The simulator's notion of a token, simple enough to count by eye in a test: a word (a run
 * of letters, combining marks and digits, with inner apostrophes as in "that's") or any one
 * other non-space character (a punctuation mark or symbol). "Hello, world!" is 4 tokens.
 * Real tokenizers differ; what matters is that usage, `max_tokens` and streaming agree.
 */
const TOKEN = /\s*(?:[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*|\S)/gu;

/**
 * The text cut into tokens as they are streamed: each piece carries the spaces before it, so
 * the pieces joined give the text back (trailing spaces go with the last piece).
 */
export function splitIntoTokens(text: string): string[] {
  const pieces = text.match(TOKEN) ?? [];
  const covered = pieces.join('').length;
  if (covered < text.length) {
    if (pieces.length === 0) return [text];
    pieces[pieces.length - 1] += text.slice(covered);
  }
  return pieces;
}

export function countTokens(text: string): number {
  return text.match(TOKEN)?.length ?? 0;
}
