/** Structured log lines (one JSON object a line) for the API process. */
export interface Logger {
  info(fields: Record<string, unknown>): void;
  error(fields: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/** JSON lines on stdout (info) and stderr (error), below `level` dropped. */
export function jsonLogger(level: keyof typeof LEVELS = 'info'): Logger {
  const write = (lineLevel: keyof typeof LEVELS, stream: NodeJS.WriteStream, fields: Record<string, unknown>) => {
    if (LEVELS[lineLevel] < LEVELS[level]) return;
    stream.write(JSON.stringify({ level: lineLevel, at: new Date().toISOString(), ...fields }) + '\n');
  };
  return {
    info: (fields) => write('info', process.stdout, fields),
    error: (fields) => write('error', process.stderr, fields),
  };
}
