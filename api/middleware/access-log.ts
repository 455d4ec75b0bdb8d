import type { RequestHandler } from 'express';
import type { Logger } from '../../domain/shared/logger';
import { serverLogEntry } from '../observability/log-entry';
import { serverLogRecorder, type LogRecorder } from '../observability/log-recorder';

/**
 * One line per request once the response is sent: who asked what, the outcome and how long it
 * took. API requests also go to the server logs (`GET /logs`) through the recorder, which
 * buffers them and writes in batches, so the response never waits for that write.
 */
export function accessLog(logger: Logger, recorder: LogRecorder = serverLogRecorder): RequestHandler {
  return (req, res, next) => {
    const startedAt = new Date();
    const started = performance.now();
    res.once('finish', () => {
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      logger.info({
        msg: 'request',
        request_id: res.locals.requestId,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        duration_ms: durationMs,
      });
      const entry = serverLogEntry(req, res, { startedAt, durationMs });
      if (entry) recorder.record(entry);
    });
    next();
  };
}
