import path from 'node:path';
import { loadConfig, parsePort, payloadKeysEnv } from '../config/env';
import { localDataKeys } from './infra/local-data-keys';
import { startProcess, waitForPort, type ManagedProcess } from './infra/processes';
import { NICENESS } from './infra/app-nodes';
import { BACKGROUND_NICENESS } from './infra/cpu-priority';
import { startTemporalDevServer, waitForNamespace } from './infra/servers';
import { startLocalSimulators, type LocalSimulators } from './infra/simulators';
import { codecServerEnv, createLauncher, printReady, redact, startStoreUnlessGiven } from './infra/launcher';
import { ensureLocalPayloadKey, LOCAL_PAYLOAD_KEY_FILE, localDataDir } from './infra/local-payload-key';

/**
 * `npm start`: the whole stack in one terminal. Starts FerretDB and the Temporal dev server
 * (data in .data/, kept across restarts) unless MONGODB_URI / TEMPORAL_ADDRESS name servers
 * to use, then the API, the workers and the media service. Ctrl-C stops everything, the
 * application first and the infrastructure last, so no worker loses its server mid-task.
 */

const env = process.env;
const port = (name: string, fallback: number) => parsePort(env, name, fallback);

async function main(): Promise<void> {
  const dataDir = localDataDir(env);
  const infrastructure: ManagedProcess[] = [];
  const application: ManagedProcess[] = [];
  let simulators: LocalSimulators | undefined;
  // Stopped in order: the application first, then the simulators and the infrastructure.
  const { stopAll, superviseExit } = createLauncher({
    stop: async () => {
      await Promise.all(application.map((p) => p.stop()));
      await simulators?.close();
      await Promise.all(infrastructure.map((p) => p.stop()));
    },
    running: () => [...application, ...infrastructure],
  });

  const childEnv: NodeJS.ProcessEnv = { ...env };
  // Stored secrets are encrypted (README, "Secrets at rest"): a local key, made once and kept in the data folder, unless DATA_KEYS names the keys.
  if (!env.DATA_KEYS) childEnv.DATA_KEYS = localDataKeys(dataDir);
  try {
    // Temporal payloads are encrypted (docs/decisions/0200): the key given, or this checkout's own, made once.
    if (!env.TEMPORAL_PAYLOAD_KEYS) Object.assign(childEnv, payloadKeysEnv(ensureLocalPayloadKey(dataDir)));
    // The Web UI decodes them through the API's codec server (docs/decisions/0201).
    const codec = codecServerEnv(env, port('PORT', 8080), port('TEMPORAL_UI_PORT', 8233));
    Object.assign(childEnv, codec.env);
    childEnv.MONGODB_URI = (await startStoreUnlessGiven(env, dataDir, { superviseExit }, infrastructure)) ?? env.MONGODB_URI;
    if (!env.TEMPORAL_ADDRESS) {
      console.log(`[launcher] starting the Temporal dev server (data in ${path.join(dataDir, 'temporal.db')})`);
      const temporal = await startTemporalDevServer({
        port: port('TEMPORAL_PORT', 7233),
        uiPort: port('TEMPORAL_UI_PORT', 8233),
        dbFile: path.join(dataDir, 'temporal.db'),
        namespace: env.TEMPORAL_NAMESPACE || 'default',
        uiCodecEndpoint: codec.endpoint,
        output: 'inherit-prefixed',
        ownProcessGroup: true,
        // The workflows' bookkeeping: below the callee's audio on this one host (docs/decisions/0245).
        niceness: BACKGROUND_NICENESS,
      });
      infrastructure.push(temporal);
      superviseExit(temporal);
      childEnv.TEMPORAL_ADDRESS = temporal.address;
    }
    simulators = await startLocalSimulators(env);
    Object.assign(childEnv, simulators.env);
    // PUBLIC_API_URL defaults to this API's own address, which the simulator reaches; a real
    // provider cannot (the processes derive the same default from the same HOST and PORT).
    const config = loadConfig(childEnv);
    // The simulator's account sends calls to its numbers to the API, like a Plivo application would.
    simulators.telephony?.setInboundUrls({
      answerUrl: `${config.publicApiUrl}/telephony/inbound/answer`,
      hangupUrl: `${config.publicApiUrl}/telephony/inbound/status`,
    });
    // Its account's webhook, as set in Razorpay's dashboard (docs/decisions/0185).
    if (simulators.payments) simulators.payments.webhookUrl = `${config.publicApiUrl}/billing/razorpay/webhook`;
    if (env.TELEPHONY_BASE_URL && !env.PUBLIC_API_URL) {
      console.warn(
        `[launcher] TELEPHONY_BASE_URL is set without PUBLIC_API_URL: the provider will post call statuses to ${config.publicApiUrl}, which it cannot reach from outside this machine`,
      );
    }
    await waitForNamespace(config.temporalAddress, config.temporalNamespace);

    // Each process's /metrics on a port of its own, on loopback unless METRICS_HOST says otherwise (docs/observability.md).
    const metricsPorts = { api: port('API_METRICS_PORT', 9464), media: port('MEDIA_METRICS_PORT', 9465), worker: port('WORKER_METRICS_PORT', 9466) };
    const metricsHost = env.METRICS_HOST || '127.0.0.1';
    for (const [name, entry] of [
      ['api', 'api/server'],
      ['worker', 'workers/main'],
      ['media', 'media/server'],
    ] as const) {
      const proc = startProcess({
        name,
        command: process.execPath,
        args: [...process.execArgv, appEntry(entry)],
        env: { ...childEnv, METRICS_PORT: String(metricsPorts[name]) },
        output: 'inherit-prefixed',
        ownProcessGroup: true,
        niceness: NICENESS[name],
      });
      application.push(proc);
      superviseExit(proc);
    }
    await waitForPort(config.host, config.port, 60_000, application[0]);
    await waitForPort(config.host, config.mediaPort, 60_000, application[2]);

    const uiNote = env.TEMPORAL_ADDRESS ? '(external Temporal: its own UI)' : `http://127.0.0.1:${port('TEMPORAL_UI_PORT', 8233)}`;
    printReady('Voice agent service is up:', [
      `  API          http://${config.host}:${config.port}/api/v1   (health: /api/v1/health)`,
      `  OpenAPI      http://${config.host}:${config.port}/openapi.json`,
      `  Media        http://${config.host}:${config.mediaPort}`,
      `  Callbacks    ${config.publicApiUrl}/telephony/calls/{call_id}/status (the provider posts call statuses here; PUBLIC_API_URL)`,
      `  Metrics      http://${metricsHost}:${metricsPorts.api}/metrics (API), :${metricsPorts.media} (media), :${metricsPorts.worker} (worker)`,
      `  Traces       ${env.OTEL_EXPORTER_OTLP_ENDPOINT ? `OTLP/HTTP to ${env.OTEL_EXPORTER_OTLP_ENDPOINT}` : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)'}`,
      `  Temporal UI  ${uiNote}`,
      `  Codec        ${codec.endpoint}   (the UI's Data Encoder; CLI: temporal workflow show --codec-endpoint ${codec.endpoint} ...)`,
      `  Payload key  ${env.TEMPORAL_PAYLOAD_KEYS ? 'TEMPORAL_PAYLOAD_KEYS' : path.join(dataDir, LOCAL_PAYLOAD_KEY_FILE)} (Temporal payloads are encrypted)`,
      ...simulators.lines,
      `  Temporal     ${config.temporalAddress} (namespace ${config.temporalNamespace})`,
      `  MongoDB      ${redact(config.mongodbUri)}`,
    ]);
  } catch (err) {
    console.error(`[launcher] ${(err as Error).message}`);
    await stopAll(1);
  }
}

/** The compiled entry next to this file (dist/) or the TypeScript source under tsx. */
function appEntry(entry: string): string {
  const extension = path.extname(__filename);
  return path.resolve(__dirname, '..', entry + extension);
}

void main();
