import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';

// A caller's own id is kept when it is safe to echo in a header and in logs.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id and every response (errors included) the `X-Request-ID` header. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('X-Request-ID');
    const id = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomBytes(16).toString('hex');
    res.locals.requestId = id;
    res.setHeader('X-Request-ID', id);
    next();
  };
}
