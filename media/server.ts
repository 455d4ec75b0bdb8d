import { Client, Connection } from '@temporalio/client';
import { useRecordingStorage } from '../domain/calls/recording-store';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { connectMongo, disconnectMongo } from '../db/connect';
import { loadConfig } from '../config/env';
import { useDataKeys } from '../contracts/secret-box';
import { temporalConnectionOptions } from '../domain/shared/temporal';
import { requirePayloadEncryption } from '../domain/shared/payload-encryption';
import { tuneHeapForLiveAudio } from './heap-tuning';
import { createProviders } from '../providers';
import { startMediaService } from './service';
import { startTracing } from '../domain/shared/tracing';
import { tracedProviders } from './telemetry';
import { freeLoopbackAddress, startMetricsServer, temporalRuntimeMetrics } from '../domain/shared/metrics-server';

/**
 * Media service entry: the calls' audio streams (telephony WebSockets, browser calls) and
 * the Temporal worker that runs live conversations on the `media` task queue.
 */
async function main(): Promise<void> {
  tuneHeapForLiveAudio();
  const config = loadConfig();
  // Stored secrets (tools' header values, webhook and TOTP secrets) are sealed with these keys.
  useDataKeys(config.dataKeys);
  // New recordings go to the object store when one is configured (docs/decisions/0214).
  useRecordingStorage(config.recordingsS3);
  const encryption = requirePayloadEncryption(config.temporalPayloadKeys);
  const tracing = startTracing('voice-agents-media', config.otlpEndpoint);
  // The SDK's own worker metrics from its exporter on loopback, served with ours (docs/observability.md).
  const sdkMetrics = config.metrics ? await freeLoopbackAddress() : null;
  Runtime.install({ logger: new DefaultLogger(config.logLevel.toUpperCase() as 'INFO'), ...temporalRuntimeMetrics(sdkMetrics) });
  const metricsServer = config.metrics
    ? await startMetricsServer({ ...config.metrics, role: 'media', temporalSdkMetricsUrl: `http://${sdkMetrics}/metrics` })
    : null;
  await connectMongo(config.mongodbUri);
  const connectionOptions = temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, encryption, tracing);
  const connection = await NativeConnection.connect(connectionOptions);
  // Conversations record their events, whose webhooks start delivery workflows.
  const temporal = new Client({ connection: await Connection.connect(connectionOptions), namespace: config.temporalNamespace });
  const media = await startMediaService({
    host: config.host,
    port: config.mediaPort,
    publicUrl: config.mediaPublicUrl,
    secret: config.auth.secret,
    connection,
    namespace: config.temporalNamespace,
    temporal,
    // With tracing on, speech synthesis and the language model get a span per request.
    providers: tracing ? tracedProviders(createProviders(config.providers)) : createProviders(config.providers),
    toolsAllowPrivateNetworks: config.toolsAllowPrivateNetworks,
    embeddings: config.embeddings,
    preparedGreetings: config.preparedGreetings,
  });
  console.log(
    `media service listening on ${media.url} (public ${media.publicUrl}), node ${media.nodeId}: conversations on its own queue ${media.taskQueue} and on the shared media queue`,
  );
  const stop = async () => {
    await media.close();
    await connection.close();
    await temporal.connection.close();
    await disconnectMongo();
    await metricsServer?.close();
    await tracing?.shutdown();
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((err) => {
  console.error('media service failed:', err);
  process.exitCode = 1;
});
