/** Small helpers of the conversation (./engine.ts) and its collaborators. */

export class Ended extends Error {
  constructor() {
    super('the conversation ended');
  }
}

/** A tool call's arguments as an object; broken JSON (the model's) or anything else reads as none. */
export function parseArguments(json: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(json || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // The model wrote broken JSON: the tool's answer tells the model.
  }
  return {};
}

export function wordCount(text: string): number {
  return text.trim().split(/\s+/).filter(Boolean).length;
}

/** `hi` as `Hindi (hi)`, so the model cannot take the code for a word; unknown codes as they are. */
export function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code; // not a well-formed language tag
  }
}

/** Which outside service an error came from, for the `error` event's `provider`. */
export function providerOf(error: unknown): string {
  const service = (error as { service?: unknown } | null)?.service;
  return typeof service === 'string' ? service : 'media';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, ms)));
}
