/** One sample of Prometheus's text exposition format (version 0.0.4). */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
  /** `# HELP` of each metric family. */
  help: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/y;

/**
 * Parses the text format as Prometheus documents it (comments, `# HELP`, `# TYPE`, samples
 * with escaped label values). A line that is none of these throws, naming it.
 */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const comment = /^#\s+(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
    if (comment) {
      (comment[1] === 'TYPE' ? types : help).set(comment[2], comment[3]);
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`not a line of the text format: ${line}`);
    samples.push({ name: sample[1], labels: parseLabels(sample[2] ?? '', line), value: parseValue(sample[3], line) });
  }
  return { types, help, samples };
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const match = LABEL.exec(text);
    if (!match) throw new Error(`bad labels at ${at} of: ${line}`);
    labels[match[1]] = match[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`bad value in: ${line}`);
  return value;
}

/** The metric family a sample belongs to: a histogram's `_bucket`, `_sum` and `_count` belong to it. */
export function familyOf(exposition: Exposition, sampleName: string): string {
  for (const suffix of ['_bucket', '_sum', '_count', '_total', '_created']) {
    const base = sampleName.endsWith(suffix) ? sampleName.slice(0, -suffix.length) : null;
    if (base && exposition.types.has(base)) return base;
  }
  return sampleName;
}

/** The sum of a metric's samples whose labels include `labels`. */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}
