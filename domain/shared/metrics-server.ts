import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import type { MetricsConfig } from '../../config/env';
import { metricsRegistry } from './metrics';

export interface MetricsServerOptions extends MetricsConfig {
  /** The process's role, printed with the address (`API`, `worker`, `media`). */
  role: string;
  /** The Temporal SDK's own Prometheus exporter in this process (workers, media), appended to each scrape. */
  temporalSdkMetricsUrl?: string;
  /** Refreshes gauges read from elsewhere (the API's queued calls) before each scrape. */
  beforeScrape?: () => Promise<void>;
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `/metrics` on its own port (never the public API's): prom-client's text format, the Node
 * runtime's default metrics, and the Temporal SDK's worker metrics read from its exporter on
 * loopback, so that each process is one scrape target.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  collectDefaultMetrics({ register: metricsRegistry });
  // prom-client names three gauges `_total`, which Prometheus keeps for counters (promtool
  // check metrics refuses them); each is the sum of its by-type gauge without the suffix.
  for (const total of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
    metricsRegistry.removeSingleMetric(total);
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    scrape(options).then(
      (text) => res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(text),
      (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/metrics`;
  console.log(`${options.role} metrics at ${url}`);
  return {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function scrape(options: MetricsServerOptions): Promise<string> {
  await options.beforeScrape?.().catch((error: Error) => console.warn(`metrics: ${error.message}`));
  const ours = await metricsRegistry.metrics();
  if (!options.temporalSdkMetricsUrl) return ours;
  // The SDK's exporter answers from memory on loopback; a failure leaves our own metrics served.
  const sdk = await fetch(options.temporalSdkMetricsUrl, { signal: AbortSignal.timeout(2_000) })
    .then((res) => (res.ok ? res.text() : ''))
    .catch(() => '');
  return sdk ? `${ours.trimEnd()}\n${sdk}` : ours;
}

/**
 * A loopback address for the Temporal SDK's Prometheus exporter (the Rust core binds it
 * itself and cannot report a port it picked): a port free right now.
 */
export function freeLoopbackAddress(): Promise<string> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(`127.0.0.1:${port}`));
    });
  });
}

/**
 * The Temporal runtime's telemetry for Runtime.install: its Prometheus exporter on `bindAddress`
 * with Prometheus's conventions (seconds, `_total` counters, unit suffixes), or none.
 */
export function temporalRuntimeMetrics(bindAddress: string | null) {
  if (!bindAddress) return {};
  return {
    telemetryOptions: {
      metrics: { prometheus: { bindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true } },
    },
  };
}
