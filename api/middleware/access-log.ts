import type { RequestHandler } from 'express';
import type { Logger } from '../logger';

/** One line per request once the response is sent: who asked what, the outcome and how long it took. */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      logger.info({
        msg: 'request',
        request_id: res.locals.requestId,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      });
    });
    next();
  };
}
