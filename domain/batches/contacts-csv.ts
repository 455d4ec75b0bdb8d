import { parse } from 'csv-parse/sync';

/** The columns tried, in this order, when the upload names no number column (compared case-insensitively). */
export const NUMBER_COLUMN_NAMES = ['number', 'phone_number', 'phone', 'mobile', 'to_number'] as const;
/** A call's `user_data` takes at most 50 values of at most 2000 characters (see NewCall in the OpenAPI document). */
export const MAX_VALUE_COLUMNS = 50;
export const MAX_VALUE_LENGTH = 2000;
export const MAX_COLUMN_NAME_LENGTH = 64;
/** Contacts per batch at most. */
export const MAX_CONTACTS = 10_000;
/** Rejected rows listed in the answer at most (all are counted). */
export const MAX_REPORTED_REJECTIONS = 1_000;

/** The E.164 rule of POST /calls (`E164` in the OpenAPI document). */
const E164 = /^\+[1-9][0-9]{6,14}$/;
/** Spreadsheets and people write numbers with these; they are dropped before the E.164 check. */
const NUMBER_SEPARATORS = /[\s\-().]/g;

export interface ParsedContact {
  /** The line of the file the row starts on (the header is line 1). */
  row: number;
  number: string;
  user_data: Record<string, string>;
}

export interface RejectedRow {
  row: number;
  /** The number cell as written (empty when the row has none). */
  number: string;
  reason: string;
}

export type ContactsFile =
  | { ok: true; numberColumn: string; columns: string[]; contacts: ParsedContact[]; rejected: RejectedRow[] }
  /** The file as a whole cannot be used: no header, no number column, bad CSV, too many columns or rows. */
  | { ok: false; reason: string };

/**
 * Reads a contacts CSV: a header row, a number column (`numberColumn`, else the first of
 * NUMBER_COLUMN_NAMES), and columns that become each contact's `user_data` (empty cells are
 * left out). A row is rejected, with its line and the reason, when its number is not E.164
 * (after dropping spaces, dashes, dots and brackets), repeats an earlier accepted row's
 * number, has more or fewer cells than the header, or has a value over 2000 characters.
 * Blank lines are skipped.
 */
export function parseContactsCsv(content: Buffer | string, numberColumn?: string): ContactsFile {
  let records: { record: string[]; raw: string }[];
  try {
    // With `raw`, each record comes as `{ record, raw }` (the parser's types do not follow the option).
    records = parse(content, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      raw: true,
      record_delimiter: ['\r\n', '\n', '\r'],
    }) as unknown as typeof records;
  } catch (error) {
    return { ok: false, reason: `not a readable CSV file: ${(error as Error).message}` };
  }
  const lines = startLines(records.map((r) => r.raw));
  const [headerRecord, ...rows] = records;
  if (!headerRecord) return { ok: false, reason: 'the file is empty: a header row and at least one contact are needed' };
  const header = headerRecord.record.map((name) => name.trim());
  const headerIssue = headerProblem(header);
  if (headerIssue) return { ok: false, reason: headerIssue };
  const numberAt =
    numberColumn === undefined
      ? header.findIndex((name) => (NUMBER_COLUMN_NAMES as readonly string[]).includes(name.toLowerCase()))
      : header.indexOf(numberColumn);
  if (numberAt < 0) {
    return {
      ok: false,
      reason:
        numberColumn === undefined
          ? `no number column: name one with number_column, or call a column one of ${NUMBER_COLUMN_NAMES.join(', ')}`
          : `no column "${numberColumn}" in the header`,
    };
  }
  const columns = header.filter((_, i) => i !== numberAt);
  if (columns.length > MAX_VALUE_COLUMNS) return { ok: false, reason: `too many columns: at most ${MAX_VALUE_COLUMNS} besides the number column` };
  if (rows.length > MAX_CONTACTS) return { ok: false, reason: `too many rows: at most ${MAX_CONTACTS} contacts per batch` };

  const contacts: ParsedContact[] = [];
  const rejected: RejectedRow[] = [];
  const firstRowOf = new Map<string, number>();
  for (const [i, { record }] of rows.entries()) {
    const row = lines[i + 1];
    const written = (record[numberAt] ?? '').trim();
    const reject = (reason: string) => rejected.push({ row, number: written, reason });
    if (record.length !== header.length) {
      reject(`has ${record.length} cells; the header has ${header.length}`);
      continue;
    }
    const number = written.replace(NUMBER_SEPARATORS, '');
    if (!number) {
      reject('no number');
      continue;
    }
    if (!E164.test(number)) {
      reject('not an E.164 number (+ and 7 to 15 digits, e.g. +919812345678)');
      continue;
    }
    const first = firstRowOf.get(number);
    if (first !== undefined) {
      reject(`duplicate of row ${first}`);
      continue;
    }
    const tooLong = header.find((_, i) => i !== numberAt && record[i].length > MAX_VALUE_LENGTH);
    if (tooLong !== undefined) {
      reject(`the value of "${tooLong}" is longer than ${MAX_VALUE_LENGTH} characters`);
      continue;
    }
    firstRowOf.set(number, row);
    const userData: Record<string, string> = {};
    header.forEach((name, i) => {
      const value = record[i].trim();
      if (i !== numberAt && value) userData[name] = value;
    });
    contacts.push({ row, number, user_data: userData });
  }
  return { ok: true, numberColumn: header[numberAt], columns, contacts, rejected };
}

function headerProblem(header: string[]): string | null {
  const blank = header.findIndex((name) => !name);
  if (blank >= 0) return `column ${blank + 1} of the header has no name`;
  // They become keys of `user_data`, stored as document fields: no path separators, no operators.
  const unusable = header.find((name) => name.includes('.') || name.startsWith('$'));
  if (unusable) return `the column name "${unusable}" may not contain "." or start with "$"`;
  const long = header.find((name) => name.length > MAX_COLUMN_NAME_LENGTH);
  if (long) return `the column name "${long.slice(0, 20)}..." is longer than ${MAX_COLUMN_NAME_LENGTH} characters`;
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) return `the column "${name}" appears twice in the header`;
    seen.add(name);
  }
  return null;
}

const LINE_BREAK = /\r\n|\r|\n/g;

/**
 * The line each record starts on, counted from the records' raw text (which holds the blank
 * lines skipped before it): the parser's own count takes a CRLF inside quotes for two lines.
 */
function startLines(raws: string[]): number[] {
  let line = 1;
  return raws.map((raw) => {
    const blankLines = /^(?:\r\n|\r|\n)*/.exec(raw)![0].match(LINE_BREAK)?.length ?? 0;
    const start = line + blankLines;
    line += raw.match(LINE_BREAK)?.length ?? 0;
    return start;
  });
}
