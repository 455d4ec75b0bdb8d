import type { RequestHandler } from 'express';
import { HttpError } from '../domain/shared/http-error';

/**
 * Limits of multipart uploads, handed to express-openapi-validator's file uploader (multer),
 * which parses every multipart body. KYC documents are the only uploads so far; the OpenAPI
 * document states the same 5 MB.
 */
export const UPLOAD_MAX_BYTES = 5 * 1024 * 1024;

export const FILE_UPLOADER_OPTIONS = {
  limits: { fileSize: UPLOAD_MAX_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024 },
  // Browsers and fetch send file names as raw UTF-8; multer's default (latin1) would garble them.
  defParamCharset: 'utf8',
};

/** The 413 detail for an upload over a limit (multer's message names which one). */
export function uploadTooLargeDetail(multerMessage: string): string {
  return `upload too large: ${multerMessage.toLowerCase()}; send one file of at most ${UPLOAD_MAX_BYTES / (1024 * 1024)} MB`;
}

/**
 * The validator's multipart stage with the contract's statuses: a body that cannot be read as
 * multipart (a malformed part header, a missing boundary, an early end) is the caller's 400
 * naming what is wrong, where the validator would answer 500 (or a 422 about a missing file).
 * Sizes over the limits stay 413. Other stages are returned as they are.
 */
export function withMultipartErrorsAsBadRequest<T extends RequestHandler>(middleware: T): RequestHandler {
  if (middleware.name !== 'multipartMiddleware') return middleware;
  return (req, res, next) =>
    middleware(req, res, (err?: unknown) => {
      const status = (err as { status?: unknown } | undefined)?.status;
      if (!err || status === 413) return next(err);
      const reason = err instanceof Error ? err.message : String(err);
      next(new HttpError(400, `the multipart body cannot be read (${reason}); send multipart/form-data with one file in the field "file"`));
    });
}
