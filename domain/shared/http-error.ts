import type { ValidationIssue } from './validation-issues';

/** An error that answers with its status and `{detail, ...extra}`, as the contract shapes errors. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationIssue[],
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : detail.map((issue) => issue.msg).join('; '));
    this.name = 'HttpError';
  }
}

/** A 422 for rules a JSON schema cannot state, in the same shape as the validator's. */
export function validationFailed(issues: ValidationIssue[]): HttpError {
  return new HttpError(422, issues);
}
