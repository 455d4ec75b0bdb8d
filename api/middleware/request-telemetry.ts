import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import type { IndexedOperation } from '../operation-index';
import { metrics, statusClass } from '../../domain/shared/metrics';
import { tracer } from '../../domain/shared/tracing';

/** What a request that the access step identified as no operation counts as (a bounded label, not its path). */
export const UNMATCHED_OPERATION = 'unmatched';

/**
 * Each request's latency by its OpenAPI operation (`res.locals.operation`, set by the access
 * step), and its server span: the trace a caller's `traceparent` names or a new one, so that
 * the workflows it starts and their activities are children of the request. The operation
 * is known only after routing, so the span is named when the answer is sent.
 */
export function requestTelemetry(): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer().startSpan(`${req.method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
    res.once('finish', () => {
      const operation = (res.locals.operation as IndexedOperation | undefined)?.operationId ?? UNMATCHED_OPERATION;
      metrics.requestDuration.observe({ operation, method: req.method, status_class: statusClass(res.statusCode) }, (performance.now() - started) / 1000);
      const route = (res.locals.operation as IndexedOperation | undefined)?.path;
      span.updateName(route ? `${req.method} ${route}` : `${req.method} ${operation}`);
      span.setAttributes({ 'http.response.status_code': res.statusCode, 'voice_agents.operation': operation, ...(route ? { 'http.route': route } : {}) });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), next);
  };
}
