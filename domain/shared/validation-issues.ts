import type { Request } from 'express';

/** One entry of a 422 body: `{type, loc, msg, input}`. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

/** An error as express-openapi-validator reports it. */
export interface ValidatorErrorItem {
  path: string;
  message: string;
  errorCode?: string;
}

/**
 * JSON-Schema keywords to the contract's type names (the pydantic family the contract
 * quotes: `less_than_equal`, `string_pattern_mismatch`, ...). docs/errors.md lists them.
 */
const TYPE_BY_KEYWORD: Record<string, string> = {
  maximum: 'less_than_equal',
  exclusiveMaximum: 'less_than',
  minimum: 'greater_than_equal',
  exclusiveMinimum: 'greater_than',
  maxLength: 'string_too_long',
  minLength: 'string_too_short',
  pattern: 'string_pattern_mismatch',
  required: 'missing',
  enum: 'enum',
  const: 'literal_error',
  additionalProperties: 'extra_forbidden',
  unevaluatedProperties: 'extra_forbidden',
  maxItems: 'too_long',
  minItems: 'too_short',
  maxProperties: 'too_long',
  minProperties: 'too_short',
  uniqueItems: 'list_not_unique',
  multipleOf: 'multiple_of',
  format: 'value_error',
};

const TYPE_BY_EXPECTED: Record<string, string> = {
  integer: 'int_type',
  number: 'float_type',
  string: 'string_type',
  boolean: 'bool_type',
  object: 'dict_type',
  array: 'list_type',
  null: 'none_required',
};

const LOCATION_BY_SEGMENT: Record<string, string> = {
  body: 'body',
  query: 'query',
  params: 'path',
  path: 'path',
  headers: 'header',
  header: 'header',
};

export function issueType(item: ValidatorErrorItem): string {
  const keyword = item.errorCode?.replace(/\.openapi\.validation$/, '') ?? '';
  if (keyword === 'type') {
    const expected = /must be (\w+)/.exec(item.message)?.[1] ?? '';
    return TYPE_BY_EXPECTED[expected] ?? 'type_error';
  }
  if (/^Unknown query parameter/i.test(item.message)) return 'extra_forbidden';
  return TYPE_BY_KEYWORD[keyword] ?? 'value_error';
}

/** `/body/call/0/max` -> `['body', 'call', 0, 'max']` (JSON-pointer unescaped). */
export function issueLoc(path: string): (string | number)[] {
  const segments = path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const [first = 'body', ...rest] = segments;
  const location = LOCATION_BY_SEGMENT[first] ?? first;
  return [location, ...rest.map((s) => (/^\d+$/.test(s) ? Number(s) : s))];
}

function valueAt(req: Request, loc: (string | number)[]): unknown {
  const [location, ...rest] = loc;
  let current: unknown = location === 'body' ? req.body : location === 'query' ? req.query : location === 'path' ? req.params : req.headers;
  if (location === 'header' && typeof rest[0] === 'string') rest[0] = rest[0].toLowerCase();
  for (const key of rest) {
    if (current === null || typeof current !== 'object') return null;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current === undefined ? null : current;
}

function message(type: string, item: ValidatorErrorItem, loc: (string | number)[]): string {
  const field = loc.slice(1).join('.') || loc[0];
  switch (type) {
    case 'missing':
      return 'Field required';
    case 'extra_forbidden':
      return `Unknown field "${field}" is not allowed`;
    default:
      return `${field} ${item.message}`;
  }
}

export function toValidationIssues(items: ValidatorErrorItem[], req: Request): ValidationIssue[] {
  return items.map((item) => {
    const loc = issueLoc(item.path);
    const type = issueType(item);
    return { type, loc, msg: message(type, item, loc), input: type === 'missing' ? null : valueAt(req, loc) };
  });
}
