import type { Server } from 'node:http';
import { useRecordingStorage } from '../domain/calls/recording-store';
import { loadConfig } from '../config/env';
import { useDataKeys } from '../contracts/secret-box';
import { connectMongo, disconnectMongo } from '../db/connect';
import { createApp } from './app';
import { jsonLogger } from '../domain/shared/logger';
import { serverLogRecorder } from './observability/log-recorder';
import { createTemporalClient } from '../domain/shared/temporal';
import { requirePayloadEncryption } from '../domain/shared/payload-encryption';
import { codecServerOpenOnLoopback } from './codec-server';
import { startTracing } from '../domain/shared/tracing';
import { startMetricsServer } from '../domain/shared/metrics-server';
import { metrics } from '../domain/shared/metrics';
import { queuedCallsEverywhere } from '../domain/calls/open-calls';

/** How long an idle client connection is kept: longer than load balancers keep theirs (AWS: 60 s). */
const KEEP_ALIVE_MS = 65_000;

/** API process entry: connect MongoDB, build the app, listen; close cleanly on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  // Before anything else: the request spans and the Temporal client interceptors need the provider registered.
  const tracing = startTracing('voice-agents-api', config.otlpEndpoint);
  // Stored secrets (tools' header values, webhook and TOTP secrets) are sealed with these keys.
  useDataKeys(config.dataKeys);
  // New recordings go to the object store when one is configured (docs/decisions/0214).
  useRecordingStorage(config.recordingsS3);
  const encryption = requirePayloadEncryption(config.temporalPayloadKeys);
  await connectMongo(config.mongodbUri);
  const temporal = createTemporalClient(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, encryption, tracing);
  // Queued calls are the whole service's: read at scrape time (every API node reports the same figure).
  const metricsServer = config.metrics
    ? await startMetricsServer({
        ...config.metrics,
        role: 'API',
        beforeScrape: async () => metrics.queuedCalls.set(await queuedCallsEverywhere(new Date())),
      })
    : null;
  const app = createApp({
    config,
    temporal,
    logger: jsonLogger(config.logLevel),
    codecServer: { codec: encryption.codec, ...config.codecServer, openOnLoopback: codecServerOpenOnLoopback(config) },
  });
  const server: Server = app.listen(config.port, config.host, () => {
    console.log(`API listening on http://${config.host}:${config.port}/api/v1`);
  });
  // A load balancer keeps idle connections to its nodes (60 s on AWS's, by default) and sends the
  // next request on one: a node that closes them sooner (Node's default: 5 s) races it, and the
  // request lost is the balancer's 502 or 503 to the client (decision 0236).
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;

  const stop = () => {
    server.close(async () => {
      await temporal.connection.close();
      await serverLogRecorder.close(); // the last requests' log entries, before the database goes
      await disconnectMongo();
      await metricsServer?.close();
      await tracing?.shutdown(); // the last spans
    });
    server.closeIdleConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error('API failed to start:', err);
  process.exitCode = 1;
});
