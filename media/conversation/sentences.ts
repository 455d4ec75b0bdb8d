/**
 * Cuts a streamed reply into sentences, so speech synthesis can start on the first sentence
 * while the model still writes the rest. A sentence ends at `.`, `!`, `?`, `…` or the
 * Devanagari danda `।` once whitespace follows it (so `3.5` or `e.g.x` stay whole), or at a
 * line break. A run-on text is cut at a comma or space after MAX_SENTENCE_CHARS, so one
 * long sentence cannot hold back the first audio.
 */
const SENTENCE_END = /[.!?…।]+["'”’)\]]*\s+|\n+/g;
const MAX_SENTENCE_CHARS = 180;

export class SentenceChunker {
  private buffer = '';

  /** Adds streamed text; answers the sentences it completed. */
  push(text: string): string[] {
    this.buffer += text;
    const sentences: string[] = [];
    let start = 0;
    for (const match of this.buffer.matchAll(SENTENCE_END)) {
      const end = match.index + match[0].length;
      const sentence = this.buffer.slice(start, end).trim();
      if (sentence) sentences.push(sentence);
      start = end;
    }
    this.buffer = this.buffer.slice(start);
    while (this.buffer.length > MAX_SENTENCE_CHARS) {
      const head = this.buffer.slice(0, MAX_SENTENCE_CHARS);
      const cut = Math.max(head.lastIndexOf(', '), head.lastIndexOf(' '));
      const at = cut > 0 ? cut + 1 : MAX_SENTENCE_CHARS;
      const sentence = this.buffer.slice(0, at).trim();
      if (sentence) sentences.push(sentence);
      this.buffer = this.buffer.slice(at);
    }
    return sentences;
  }

  /** The rest, at the end of the reply. */
  flush(): string | null {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest || null;
  }
}
