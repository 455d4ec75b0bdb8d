import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP exporter sent it, with the service that sent it. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base to give as OTEL_EXPORTER_OTLP_ENDPOINT (spans arrive at `/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: OtlpAttribute[] }[] }[];
  }[];
}

/**
 * An OTLP/HTTP trace receiver in the test process, as a collector's `otlphttp` receiver takes
 * them: `POST /v1/traces` with the JSON encoding of ExportTraceServiceRequest (what
 * @opentelemetry/exporter-trace-otlp-http sends; ids are hex strings in OTLP's JSON). Any other
 * encoding is answered 415, so that a change of the exporter's encoding fails the test loudly.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return void res.writeHead(415).end();
      try {
        spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces));
      } catch {
        return void res.writeHead(400).end();
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function spansOf(request: OtlpTraces): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        attributes: attributesOf(span.attributes),
      })),
    );
  });
}

function attributesOf(attributes: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue ?? null]),
  );
}
