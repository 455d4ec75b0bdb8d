import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { HttpError } from '../../domain/shared/http-error';
import type { Logger } from '../../domain/shared/logger';
import { uploadTooLargeDetail } from '../uploads';
import { toValidationIssues, type ValidatorErrorItem } from '../../domain/shared/validation-issues';

/** Any path no route serves: 404 in the contract's shape. */
export function notFound(): RequestHandler {
  return (req, _res, next) => next(new HttpError(404, `no route for ${req.method} ${req.path}`));
}

interface ValidatorError {
  status: number;
  message: string;
  errors?: ValidatorErrorItem[];
  /** `Allow` on a 405. */
  headers?: Record<string, string>;
}

function isValidatorError(err: unknown): err is ValidatorError {
  return typeof err === 'object' && err !== null && typeof (err as ValidatorError).status === 'number' && Array.isArray((err as ValidatorError).errors);
}

interface BodyParserError {
  type: string;
  status: number;
  message: string;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return typeof err === 'object' && err !== null && typeof (err as BodyParserError).type === 'string' && 'status' in err;
}

/**
 * The answer to an error the code raises on purpose (HttpError) or a Temporal conflict, shared
 * with the MCP server (api/mcp), whose tool errors carry the same status and body. Null: not
 * one of these.
 */
export function domainErrorAnswer(err: unknown): { status: number; body: Record<string, unknown>; headers: Record<string, string> } | null {
  if (err instanceof HttpError) return { status: err.status, body: { detail: err.detail, ...err.extra }, headers: err.headers };
  if (err instanceof WorkflowExecutionAlreadyStartedError) return { status: 409, body: { detail: 'already in progress' }, headers: {} };
  if (err instanceof WorkflowNotFoundError) return { status: 404, body: { detail: 'not found' }, headers: {} };
  return null;
}

/**
 * The one place errors become responses: HttpError as is, validator failures as 422
 * `{detail: [...]}`, Temporal conflicts as 409/404, and anything unexpected as a 500 that
 * carries the request id and no stack trace.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    const known = domainErrorAnswer(err);
    if (known) {
      res.set(known.headers).status(known.status).json(known.body);
      return;
    }
    if (isBodyParserError(err) && err.status < 500) {
      if (err.type === 'entity.parse.failed') {
        res.status(422).json({
          detail: [{ type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${err.message}`, input: null }],
        });
        return;
      }
      res.status(err.status).json({ detail: err.message });
      return;
    }
    if (isValidatorError(err)) {
      if (err.status === 400) {
        res.status(422).json({ detail: toValidationIssues(err.errors ?? [], req) });
        return;
      }
      if (err.status === 404) {
        res.status(404).json({ detail: `no route for ${req.method} ${req.path}` });
        return;
      }
      if (err.status === 413) {
        // The file uploader (multer) refused a multipart body over UPLOAD_LIMITS.
        res.status(413).json({ detail: uploadTooLargeDetail(err.message) });
        return;
      }
      if (err.status === 415) {
        res.status(415).json({ detail: unsupportedMediaTypeDetail(req) });
        return;
      }
      if (err.status < 500) {
        // A 405 names the methods the path has (RFC 9110: `Allow` is required on a 405).
        res
          .set(err.headers ?? {})
          .status(err.status)
          .json({ detail: err.message });
        return;
      }
    }
    // Anything else, a 5xx the validator raised included, is unexpected: logged with its id.
    const requestId = res.locals.requestId as string;
    logger.error({ request_id: requestId, method: req.method, path: req.path, error: String(err?.stack ?? err) });
    res.status(500).json({ detail: 'internal server error', request_id: requestId });
  };
}

/**
 * The 415 detail: what was sent and what the operation takes (the validator's own message
 * says `unsupported media type undefined` when no Content-Type was sent).
 */
function unsupportedMediaTypeDetail(req: Request): string {
  const sent = req.get('Content-Type');
  const content = (req as Request & { openapi?: { schema?: { requestBody?: { content?: Record<string, unknown> } } } }).openapi?.schema?.requestBody?.content;
  const accepted = Object.keys(content ?? {});
  const what = sent ? `the body's media type "${sent}" is not one this operation takes` : 'the request has no Content-Type';
  return accepted.length ? `${what}; send ${accepted.join(' or ')}` : what;
}
