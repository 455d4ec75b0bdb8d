import type { AgentExtraction } from '../../db/models/agent';

/**
 * The extractions of post-call analytics: the request that asks the model for them, and the
 * rules that turn its JSON answer into the call's `extracted`.
 *
 * With declared extractions, `extracted` has exactly the declared keys; each value is coerced
 * to its type or is null:
 * - text: a string (trimmed; empty is null); a number or boolean becomes its text.
 * - number: a finite number; a string that is one (`"42"`, `" 4.5 "`, `"1,200"`) becomes it.
 * - boolean: true or false; the strings `true`/`false`/`yes`/`no` (any case) become them.
 * - choice: one of the declared values, matched without regard to case or surrounding space,
 *   and saved in the declared spelling; anything else is null.
 * - date: `YYYY-MM-DD` that names a real calendar day; an ISO date-time gives its date part.
 * - list: an array of strings (numbers and booleans become text; other items and empty
 *   strings are dropped); a single non-empty string becomes a one-item list.
 * - a key the model left out is null; keys the model added are dropped.
 *
 * With no declared extractions, only an `extraction_prompt`, the prompt defines the shape: the
 * model's object is kept as it is, apart from keys a MongoDB-compatible store refuses
 * (starting with `$` or containing `.`), which are dropped at every depth.
 *
 * An answer that is not a JSON object is a failure of the model (the activity is retried).
 */

export type ExtractionType = AgentExtraction['type'];

const TYPE_HINTS: Record<ExtractionType, string> = {
  text: 'a string',
  number: 'a number',
  boolean: 'true or false',
  choice: 'exactly one of the choice values below',
  date: 'a date as "YYYY-MM-DD"',
  list: 'an array of strings',
};

/** The system message of the extraction request: the keys, their types and the agent's instruction. */
export function extractionInstructions(extractions: AgentExtraction[], extractionPrompt: string): string {
  const lines = [
    'You extract data from the transcript of a phone call between a voice agent (assistant) and a caller (user).',
    'Answer with one JSON object and nothing else.',
  ];
  if (extractions.length > 0) {
    lines.push('Use exactly these keys; use null for a value the call does not tell.', '');
    for (const item of extractions) {
      const label = item.label ? ` - ${item.label}` : '';
      lines.push(`"${item.key}" (${item.type}: ${TYPE_HINTS[item.type] ?? TYPE_HINTS.text})${label}`);
      if (item.description) lines.push(`  ${item.description}`);
      if (item.type === 'choice') for (const choice of item.choices) lines.push(`  - "${choice.value}"${choice.when ? ` when ${choice.when}` : ''}`);
    }
  }
  if (extractionPrompt.trim()) lines.push('', 'Instructions:', extractionPrompt.trim());
  return lines.join('\n');
}

/** The model's answer as a JSON object; throws when it is not one. */
export function parseExtractionAnswer(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(stripCodeFence(text));
  } catch {
    throw new Error(`the language model's extraction answer is not valid JSON: ${text.slice(0, 200)}`);
  }
  if (!isPlainObject(value)) throw new Error(`the language model's extraction answer is not a JSON object: ${text.slice(0, 200)}`);
  return value;
}

/** `extracted` from the model's object, by the rules above. */
export function extractedValues(answer: Record<string, unknown>, extractions: AgentExtraction[]): Record<string, unknown> {
  if (extractions.length === 0) return storableObject(answer);
  const answered = new Map(Object.entries(answer));
  return Object.fromEntries(extractions.map((item) => [item.key, coerce(answered.get(item.key), item)]));
}

export function coerce(value: unknown, item: Pick<AgentExtraction, 'type' | 'choices'>): unknown {
  switch (item.type) {
    case 'number':
      return asNumber(value);
    case 'boolean':
      return asBoolean(value);
    case 'choice':
      return asChoice(value, item.choices);
    case 'date':
      return asDate(value);
    case 'list':
      return asList(value);
    default:
      return asText(value);
  }
}

function asText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') return null;
  return value.trim() || null;
}

function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim().replace(/(\d),(?=\d{3}\b)/g, '$1');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  const number = Number(text);
  return Number.isFinite(number) ? number : null;
}

const BOOLEAN_WORDS = new Map([
  ['true', true],
  ['yes', true],
  ['false', false],
  ['no', false],
]);

function asBoolean(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  return BOOLEAN_WORDS.get(value.trim().toLowerCase()) ?? null;
}

function asChoice(value: unknown, choices: { value: string }[]): string | null {
  if (typeof value !== 'string') return null;
  const wanted = value.trim().toLowerCase();
  return choices.find((choice) => choice.value.trim().toLowerCase() === wanted)?.value ?? null;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function asDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = ISO_DATE.exec(value.trim());
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // Date.UTC rolls over (February 30th is March 2nd): a real day reads back unchanged.
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return `${match[1]}-${match[2]}-${match[3]}`;
}

function asList(value: unknown): string[] | null {
  if (typeof value === 'string') return value.trim() ? [value.trim()] : null;
  if (!Array.isArray(value)) return null;
  return value.map(asText).filter((item): item is string => item !== null);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const storableKey = (key: string) => !key.startsWith('$') && !key.includes('.');

function storableObject(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(object)
      .filter(([key]) => storableKey(key))
      .map(([key, value]) => [key, storable(value)]),
  );
}

function storable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(storable);
  if (isPlainObject(value)) return storableObject(value);
  return value;
}

/** Some models wrap JSON in a Markdown code fence even in JSON mode. */
function stripCodeFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text);
  return fenced ? fenced[1] : text;
}
