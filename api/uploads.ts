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
