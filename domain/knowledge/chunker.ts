/**
 * Splits a document into the passages retrieval returns. A chunk is about 800 characters:
 * long enough to carry a complete answer (a policy paragraph, a price table row with its
 * context), short enough that the few chunks a conversation turn adds to the prompt stay
 * cheap and that BM25's length normalisation compares like with like. Chunks end on
 * paragraph boundaries, else on sentence boundaries, and only a sentence longer than a chunk
 * is cut between words. Consecutive chunks of one section share up to 150 characters (the
 * previous chunk's last sentences), so an answer that straddles a boundary is whole in one
 * of them. A Markdown section's headings (its path, "Returns > Refunds") start each of its
 * chunks: a passage keeps the words that say what it is about.
 */
export const CHUNK_TARGET_CHARS = 800;
export const CHUNK_OVERLAP_CHARS = 150;

export type TextFormat = 'markdown' | 'plain';

export interface Chunk {
  /** 0-based order within the document. */
  position: number;
  /** The Markdown heading path of the section, or null. */
  heading: string | null;
  /** The text retrieval returns: the heading path (when there is one), a blank line, the passage. */
  text: string;
}

interface Section {
  heading: string | null;
  body: string;
}

/** A piece that is never split further, with what joins it to the piece before it. */
interface Unit {
  text: string;
  joiner: '\n\n' | ' ';
}

const ATX_HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const CODE_FENCE = /^ {0,3}(`{3,}|~{3,})/;
// After a sentence's end mark (Latin or the Devanagari danda), before the next sentence.
const SENTENCE_END = /(?<=[.!?।॥])\s+/u;

export function chunkText(text: string, format: TextFormat): Chunk[] {
  // NUL characters can come out of a PDF's text layer; they are not text.
  const normalized = text.replace(/\r\n?/g, '\n').replaceAll('\u0000', '');
  const sections = format === 'markdown' ? markdownSections(normalized) : [{ heading: null, body: normalized }];
  const chunks: Chunk[] = [];
  for (const section of sections) {
    const prefix = section.heading ? `${section.heading}\n\n` : '';
    const budget = Math.max(CHUNK_TARGET_CHARS - prefix.length, CHUNK_TARGET_CHARS / 2);
    for (const body of packUnits(unitsOf(section.body, budget), budget)) {
      chunks.push({ position: chunks.length, heading: section.heading, text: prefix + body });
    }
  }
  return chunks;
}

/** ATX headings (`#` to `######`) outside fenced code open a section; its heading is the path of titles. */
function markdownSections(text: string): Section[] {
  const sections: Section[] = [];
  const path: { level: number; title: string }[] = [];
  let lines: string[] = [];
  let fence: string | null = null;
  const close = () => {
    sections.push({ heading: path.length ? path.map((h) => h.title).join(' > ') : null, body: lines.join('\n') });
    lines = [];
  };
  for (const line of text.split('\n')) {
    const fenceMark = CODE_FENCE.exec(line)?.[1];
    if (fenceMark && (fence === null || fenceMark.startsWith(fence))) fence = fence === null ? fenceMark : null;
    const heading = fence === null && !fenceMark ? ATX_HEADING.exec(line) : null;
    if (!heading) {
      lines.push(line);
      continue;
    }
    close();
    const level = heading[1].length;
    while (path.length && path[path.length - 1].level >= level) path.pop();
    const title = heading[2].trim();
    if (title) path.push({ level, title });
  }
  close();
  return sections.filter((s) => s.body.trim());
}

/** Paragraphs that fit; longer ones as sentences; longer sentences as lines, then word runs. */
function unitsOf(body: string, budget: number): Unit[] {
  const units: Unit[] = [];
  for (const paragraph of body.split(/\n[ \t]*\n/)) {
    const trimmed = paragraph.trim();
    if (!trimmed) continue;
    const pieces = trimmed.length <= budget ? [trimmed] : trimmed.split(SENTENCE_END).flatMap((s) => splitLong(s, budget));
    pieces.forEach((text, i) => units.push({ text, joiner: i === 0 ? '\n\n' : ' ' }));
  }
  return units;
}

function splitLong(sentence: string, budget: number): string[] {
  if (sentence.length <= budget) return [sentence];
  const lines = sentence
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length > 1) return lines.flatMap((line) => splitLong(line, budget));
  const pieces: string[] = [];
  let piece = '';
  for (const word of sentence.split(/\s+/)) {
    for (let rest = word; rest; rest = rest.slice(budget)) {
      const part = rest.slice(0, budget);
      if (piece && piece.length + 1 + part.length > budget) {
        pieces.push(piece);
        piece = '';
      }
      piece = piece ? `${piece} ${part}` : part;
    }
  }
  if (piece) pieces.push(piece);
  return pieces;
}

/** Greedy packing up to the budget; each new chunk repeats the previous one's tail (the overlap). */
function packUnits(units: Unit[], budget: number): string[] {
  const bodies: string[] = [];
  let current: Unit[] = [];
  let length = 0;
  const join = (list: Unit[]) => list.map((u, i) => (i === 0 ? u.text : u.joiner + u.text)).join('');
  for (const unit of units) {
    if (current.length && length + unit.joiner.length + unit.text.length > budget) {
      bodies.push(join(current));
      current = overlapOf(current, budget - unit.text.length);
      length = join(current).length;
    }
    length += (current.length ? unit.joiner.length : 0) + unit.text.length;
    current.push(unit);
  }
  if (current.length) bodies.push(join(current));
  return bodies;
}

/** The last units of a chunk that fit in the overlap (and leave room for what follows). */
function overlapOf(units: Unit[], room: number): Unit[] {
  const limit = Math.min(CHUNK_OVERLAP_CHARS, room - 2);
  const tail: Unit[] = [];
  let length = 0;
  for (let i = units.length - 1; i >= 0; i--) {
    length += units[i].text.length + (tail.length ? units[i + 1].joiner.length : 0);
    if (length > limit) break;
    tail.unshift(units[i]);
  }
  return tail;
}
