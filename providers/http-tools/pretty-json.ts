/**
 * Lays out a JSON text with two-space indentation, or answers null when it is not JSON.
 *
 * It re-indents the text itself instead of `JSON.stringify(JSON.parse(text))`, which would
 * round numbers beyond 2^53 (order ids, phone numbers as numbers) and drop duplicate keys:
 * the language model must read exactly what the tool's server said.
 */
export function prettyJson(text: string): string | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end + 1);
      i = end;
    } else if (char === '{' || char === '[') {
      const next = nextVisible(text, i + 1);
      if (text[next] === (char === '{' ? '}' : ']')) {
        out += char + text[next];
        i = next;
      } else {
        depth++;
        out += char + newline();
      }
    } else if (char === '}' || char === ']') {
      depth--;
      out += newline() + char;
    } else if (char === ',') {
      out += ',' + newline();
    } else if (char === ':') {
      out += ': ';
    } else if (!isJsonWhitespace(char)) {
      out += char;
    }
  }
  return out;
}

/** Index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

function nextVisible(text: string, from: number): number {
  let i = from;
  while (isJsonWhitespace(text[i])) i++;
  return i;
}

function isJsonWhitespace(char: string): boolean {
  return char === ' ' || char === '\n' || char === '\r' || char === '\t';
}
