import { trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';

/** Our spans' instrumentation scope (the API's requests, the media node's turns, providers' requests). */
export const TRACER_NAME = 'voice-agents';

/** The tracer of our own spans: OpenTelemetry's no-op tracer until startTracing registers a provider. */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

export interface Tracing {
  /** Installed on the process's Temporal connections: client, workflow and activity interceptors, and the workflows' span sink. */
  temporalPlugin: OpenTelemetryPlugin;
  /** Sends what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Traces over OTLP/HTTP when `endpoint` is set (OTEL_EXPORTER_OTLP_ENDPOINT; spans posted to
 * `<endpoint>/v1/traces`, batched), nothing otherwise: without a registered provider every
 * span of ours is OpenTelemetry's no-op and no Temporal interceptor is installed, so tracing
 * off costs nothing. W3C trace context (`traceparent`) carries a trace into the API, and the
 * Temporal interceptors carry it in workflow and activity headers.
 */
export function startTracing(serviceName: string, endpoint: string | null): Tracing | null {
  if (!endpoint) return null;
  const resource = new Resource({ [ATTR_SERVICE_NAME]: serviceName });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }), { scheduledDelayMillis: 1_000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // The AsyncLocalStorage context manager and the W3C propagators: a span's children find it across awaits.
  provider.register();
  return {
    temporalPlugin: new OpenTelemetryPlugin({ resource, spanProcessor }),
    shutdown: () => provider.shutdown(),
  };
}
