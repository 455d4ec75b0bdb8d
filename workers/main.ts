import { Client } from '@temporalio/client';
import { ensureRetentionSchedule } from '../domain/privacy/temporal';
import { useRecordingStorage } from '../domain/calls/recording-store';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { systemClock } from '../activities';
import { loadConfig } from '../config/env';
import { useDataKeys } from '../contracts/secret-box';
import { temporalConnectionOptions } from '../domain/shared/temporal';
import { requirePayloadEncryption } from '../domain/shared/payload-encryption';
import { connectMongo, disconnectMongo } from '../db/connect';
import { createProviders } from '../providers';
import { createPaymentGateway } from '../providers/payments/gateway';
import { sellerOf } from '../domain/billing/invoices';
import { createWorkers, WORKER_SHUTDOWN_GRACE } from './bootstrap';
import { parseRoles } from './roles';
import { startTracing } from '../domain/shared/tracing';
import { freeLoopbackAddress, startMetricsServer, temporalRuntimeMetrics } from '../domain/shared/metrics-server';

/**
 * Worker process entry. `WORKER_ROLES` picks the task queues (comma list, default all), so
 * each role can be scaled out on its own while development runs them in one process.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  // Stored secrets (tools' header values, webhook and TOTP secrets) are sealed with these keys.
  useDataKeys(config.dataKeys);
  // New recordings go to the object store when one is configured (docs/decisions/0214).
  useRecordingStorage(config.recordingsS3);
  const roles = parseRoles(process.env.WORKER_ROLES);
  const encryption = requirePayloadEncryption(config.temporalPayloadKeys);
  const tracing = startTracing('voice-agents-worker', config.otlpEndpoint);
  // The SDK's own worker metrics (task slots, poll and schedule-to-start latencies) from its exporter on loopback, served with ours.
  const sdkMetrics = config.metrics ? await freeLoopbackAddress() : null;
  Runtime.install({ logger: new DefaultLogger(config.logLevel.toUpperCase() as 'INFO'), ...temporalRuntimeMetrics(sdkMetrics) });
  const metricsServer = config.metrics
    ? await startMetricsServer({ ...config.metrics, role: 'worker', temporalSdkMetricsUrl: `http://${sdkMetrics}/metrics` })
    : null;
  await connectMongo(config.mongodbUri);
  // The connection carries the payload encryption (and tracing, when on) into every worker and client made on it.
  const connection = await NativeConnection.connect(
    temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, encryption, tracing),
  );
  // Activities that start workflows (webhook fan-out) share the workers' connection, so a
  // delivery can start eagerly on this process's webhooks worker (issue 18).
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const providers = createProviders(config.providers);
  const workers = await createWorkers({
    connection,
    namespace: config.temporalNamespace,
    roles,
    deps: {
      clock: systemClock,
      temporal,
      webhooksAllowPrivateNetworks: config.webhooksAllowPrivateNetworks,
      // Calls dial through the provider, which posts their statuses to the API's public address.
      telephony: providers.telephony,
      telephonyCallbackBaseUrl: config.publicApiUrl,
      // A welcome with the call's own values is synthesized while the phone rings (docs/decisions/0228).
      synthesizer: providers.synthesizer,
      // Every worker node dials at the account's pace together (docs/decisions/0166).
      dialsPerSecond: config.telephonyCps,
      // Post-call analytics: the agent's provider, each at its own service (docs/decisions/0190).
      languageModelFor: (provider) => providers.languageModelFor(provider),
      // Payment checks ask the gateway about open orders and complete paid ones (docs/decisions/0186).
      paymentGateway: config.providers.payments ? createPaymentGateway(config.providers.payments, config.providers.timeoutMs) : undefined,
      seller: sellerOf(config.billing),
      // KYC documents' bytes erased this long after the decision (docs/decisions/0211).
      kycDocumentRetentionSeconds: config.privacy.kycDocumentRetentionSeconds,
    },
    tuning: { webhookAttemptConcurrency: config.webhookAttemptConcurrency, webhookRetryConcurrency: config.webhookRetryConcurrency },
    shutdownGraceTime: WORKER_SHUTDOWN_GRACE,
  });

  // SIGINT/SIGTERM: let each worker finish its tasks (shutdownGraceTime) instead of exiting.
  const shutdown = () => workers.forEach((worker) => worker.shutdown());
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  // The retention sweep's Schedule, created by the first ops worker, found by the others (docs/decisions/0215).
  if (roles.includes('ops')) await ensureRetentionSchedule(temporal);
  console.log(`worker polling ${roles.join(', ')} on ${config.temporalAddress}`);
  try {
    await Promise.all(workers.map((worker) => worker.run()));
  } finally {
    await connection.close();
    await disconnectMongo();
    await metricsServer?.close();
    await tracing?.shutdown();
  }
}

main().catch((err) => {
  console.error('worker failed:', err);
  process.exitCode = 1;
});
