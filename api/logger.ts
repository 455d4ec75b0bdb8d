/** Structured log lines (one JSON object a line) for the API process. */
export interface Logger {
  error(fields: Record<string, unknown>): void;
}

export const jsonLogger: Logger = {
  error: (fields) => console.error(JSON.stringify({ level: 'error', at: new Date().toISOString(), ...fields })),
};
