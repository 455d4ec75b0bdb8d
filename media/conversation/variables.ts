/** `{variable}`: the same pattern the API lists an agent's `variables` with (domain/agents/variables.ts). */
const VARIABLE = /\{([a-zA-Z_][a-zA-Z0-9_]*)\}/g;

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
