/**
 * A `{variable}` in a welcome message or prompt: a letter or `_`, then letters, digits or `_`
 * (so it can be a key of the call's `user_data`). Anything else in braces, such as `{ }`,
 * `{1st}` or JSON in a prompt, is plain text.
 */
const VARIABLE = /\{([a-zA-Z_][a-zA-Z0-9_]*)\}/g;

/** Every variable of the welcome message, then of the prompt, in order of first use, each once. */
export function templateVariables(welcomeMessage: string, systemPrompt: string): string[] {
  const seen = new Set<string>();
  for (const text of [welcomeMessage, systemPrompt]) {
    for (const match of text.matchAll(VARIABLE)) seen.add(match[1]);
  }
  return [...seen];
}

/**
 * Fills `{variables}` of a welcome message or prompt from the call's `user_data`. A variable
 * the call did not give becomes empty text, so the caller never hears a placeholder. Values
 * that are not strings are written as JSON text.
 */
export function fillVariables(template: string, userData: Record<string, unknown>): string {
  return template.replace(VARIABLE, (_whole, name: string) => {
    const value = Object.prototype.hasOwnProperty.call(userData, name) ? userData[name] : undefined;
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
