/**
 * Plivo XML as Plivo reads it (docs.plivo.com "XML reference": a `<Response>` whose elements
 * run in order), for the simulated provider: a small XML parser (elements, attributes in either
 * quote, text, the five predefined entities and numeric references, comments, the declaration)
 * and what the simulator does with the elements the service answers with. Written apart from the
 * service's own XML writer (providers/telephony/answer-xml.ts), which test/conformance holds to
 * the plivo SDK's `Response()`.
 */

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (its children's not included), entities decoded. */
  text: string;
}

/** What the call does, from the first verb of a `<Response>` the simulator acts on. */
export type PlivoVerb =
  | { kind: 'stream'; url: string; bidirectional: boolean; contentType: string | null }
  | { kind: 'hangup'; reason: string | null }
  | {
      kind: 'dial';
      number: string;
      actionUrl: string | null;
      callbackUrl: string | null;
      timeoutSeconds: number | null;
      timeLimitSeconds: number | null;
      callerId: string | null;
    }
  | { kind: 'conference'; room: string; callbackUrl: string | null }
  | { kind: 'nothing' };

/** The first verb of a Plivo XML answer; null when the text is not a `<Response>` document. */
export function readPlivoXml(text: string): PlivoVerb | null {
  const root = parseXml(text);
  if (!root || root.name !== 'Response') return null;
  for (const element of root.children) {
    const verb = verbOf(element);
    if (verb) return verb;
  }
  // Nothing left to do: Plivo hangs the call up.
  return { kind: 'nothing' };
}

function verbOf(element: XmlElement): PlivoVerb | null {
  const attribute = (name: string): string | null => element.attributes[name] ?? null;
  const seconds = (name: string): number | null => {
    const value = attribute(name);
    return value !== null && /^\d+$/.test(value) ? Number(value) : null;
  };
  switch (element.name) {
    case 'Stream':
      return { kind: 'stream', url: element.text.trim(), bidirectional: attribute('bidirectional') === 'true', contentType: attribute('contentType') };
    case 'Hangup':
      return { kind: 'hangup', reason: attribute('reason') };
    case 'Conference':
      return { kind: 'conference', room: element.text.trim(), callbackUrl: attribute('callbackUrl') };
    case 'Dial': {
      const number = element.children.find((child) => child.name === 'Number');
      if (!number) return null;
      const dialled = number.text.trim();
      return {
        kind: 'dial',
        // Plivo writes numbers as digits; the simulator's records are E.164.
        number: /^\d+$/.test(dialled) ? `+${dialled}` : dialled,
        actionUrl: attribute('action'),
        callbackUrl: attribute('callbackUrl'),
        timeoutSeconds: seconds('timeout'),
        timeLimitSeconds: seconds('timeLimit'),
        callerId: attribute('callerId'),
      };
    }
    default:
      return null;
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name[0] === '#') return String.fromCodePoint(name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
    return ENTITIES[name] ?? whole;
  });
}

/** The document's root element, or null when the text is not well-formed XML of one root. */
export function parseXml(text: string): XmlElement | null {
  const tokens =
    /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[([\s\S]*?)\]\]>|<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  for (let match = tokens.exec(text); match; match = tokens.exec(text)) {
    const [, cdata, closing, name, attributeText, selfClosing, chars, stray] = match;
    if (stray) return null;
    const parent = stack.at(-1);
    if (cdata !== undefined || chars !== undefined) {
      const content = cdata ?? decodeEntities(chars!);
      if (parent) parent.text += content;
      else if (content.trim() !== '') return null;
      continue;
    }
    if (!name) continue; // a comment or the declaration
    if (closing) {
      if (parent?.name !== name) return null;
      stack.pop();
      continue;
    }
    if (!parent && root) return null; // a second root
    const element: XmlElement = { name, attributes: attributesOf(attributeText ?? ''), children: [], text: '' };
    if (parent) parent.children.push(element);
    else root = element;
    if (!selfClosing) stack.push(element);
  }
  return stack.length === 0 ? root : null;
}

function attributesOf(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [, name, double, single] of text.matchAll(/([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
    attributes[name!] = decodeEntities(double ?? single ?? '');
  return attributes;
}
