import path from 'node:path';
import { loadConfig, parsePort, payloadKeysEnv } from '../config/env';
import { localDataKeys } from './infra/local-data-keys';
import { freePort, type ManagedProcess } from './infra/processes';
import { startLocalSimulators, type LocalSimulators } from './infra/simulators';
import { codecServerEnv, createLauncher, printReady, redact, startStoreUnlessGiven } from './infra/launcher';
import { ensureLocalPayloadKey, LOCAL_PAYLOAD_KEY_FILE, localDataDir } from './infra/local-payload-key';
import { startAppNode, type AppNode, type AppRole } from './infra/app-nodes';
import { startLoadBalancer, type LoadBalancer } from './infra/load-balancer';
import { freeClusterPorts, startTemporalCluster, TEMPORAL_SERVER_VERSION, type TemporalCluster } from './infra/temporal-cluster';

/**
 * `npm run start:cluster`: the stack shaped as production runs it, on one machine. The real
 * Temporal server on PostgreSQL (persistence and advanced visibility) with its Web UI server,
 * FerretDB, and several nodes of each process: API nodes behind a local load balancer on PORT,
 * worker nodes, and media nodes on MEDIA_PORT, MEDIA_PORT+1, ... Data in .data/cluster/.
 * A node that dies is reported and the others carry on (that is the point of having several);
 * a server that dies stops the stack, as in `npm start`.
 */

const env = process.env;
const port = (name: string, fallback: number) => parsePort(env, name, fallback);
const count = (name: string, fallback: number) => {
  const value = Number(env[name] || fallback);
  if (!Number.isInteger(value) || value < 1 || value > 16) throw new Error(`${name} must be a whole number from 1 to 16, got "${env[name]}"`);
  return value;
};

async function main(): Promise<void> {
  const dataDir = path.join(localDataDir(env), 'cluster');
  const host = env.HOST || '127.0.0.1';
  const nodes = { api: count('CLUSTER_API_NODES', 2), worker: count('CLUSTER_WORKER_NODES', 2), media: count('CLUSTER_MEDIA_NODES', 2) };
  const infrastructure: ManagedProcess[] = [];
  const application: AppNode[] = [];
  let temporal: TemporalCluster | undefined;
  let balancer: LoadBalancer | undefined;
  let simulators: LocalSimulators | undefined;
  // Stopped in order: traffic first, then the nodes, the simulators, Temporal, FerretDB.
  const { stopAll, stopping, superviseExit } = createLauncher({
    stop: async () => {
      await balancer?.close();
      await Promise.all(application.map((node) => node.process.stop()));
      await simulators?.close();
      await temporal?.stop();
      await Promise.all(infrastructure.map((p) => p.stop()));
    },
    running: () => [...application.map((n) => n.process), ...(temporal?.processes() ?? []), ...infrastructure],
  });

  const childEnv: NodeJS.ProcessEnv = { ...env };
  // Stored secrets are encrypted (README, "Secrets at rest"): a local key, made once and kept in the data folder, unless DATA_KEYS names the keys.
  if (!env.DATA_KEYS) childEnv.DATA_KEYS = localDataKeys(dataDir);
  try {
    // Temporal payloads are encrypted (docs/decisions/0200): the key given, or the checkout's own
    // (the one `npm start` keeps, so that staff scripts work against either profile).
    if (!env.TEMPORAL_PAYLOAD_KEYS) Object.assign(childEnv, payloadKeysEnv(ensureLocalPayloadKey(localDataDir(env))));
    // The UI server decodes them through the API's codec server, behind the load balancer (docs/decisions/0201).
    const codec = codecServerEnv(env, port('PORT', 8080), port('TEMPORAL_UI_PORT', 8233));
    Object.assign(childEnv, codec.env);
    childEnv.MONGODB_URI = (await startStoreUnlessGiven(env, dataDir, { superviseExit }, infrastructure)) ?? env.MONGODB_URI;
    const namespace = env.TEMPORAL_NAMESPACE || 'default';
    console.log(`[launcher] starting PostgreSQL and the Temporal server (data in ${dataDir})`);
    temporal = await startTemporalCluster({
      host: '127.0.0.1',
      dataDir,
      ports: { ...(await freeClusterPorts()), frontend: port('TEMPORAL_PORT', 7233), ui: port('TEMPORAL_UI_PORT', 8233) },
      postgresPort: env.POSTGRES_PORT ? port('POSTGRES_PORT', 0) : await freePort(),
      namespace,
      ui: true,
      codecEndpoint: codec.endpoint,
      output: 'inherit-prefixed',
      ownProcessGroup: true,
    });
    for (const proc of temporal.processes()) superviseExit(proc);
    childEnv.TEMPORAL_ADDRESS = temporal.address;
    childEnv.TEMPORAL_NAMESPACE = namespace;

    simulators = await startLocalSimulators(env);
    Object.assign(childEnv, simulators.env);
    const apiPort = port('PORT', 8080);
    const publicApiUrl = env.PUBLIC_API_URL || `http://127.0.0.1:${apiPort}/api/v1`;
    childEnv.PUBLIC_API_URL = publicApiUrl;
    const config = loadConfig(childEnv);
    simulators.telephony?.setInboundUrls({ answerUrl: `${publicApiUrl}/telephony/inbound/answer`, hangupUrl: `${publicApiUrl}/telephony/inbound/status` });

    // API nodes on API_NODE_PORT, +1, ...; media nodes on MEDIA_PORT, +1, ...
    const apiNodePort = port('API_NODE_PORT', 8180);
    const mediaPort = config.mediaPort;
    // Each node's /metrics on a port of its own (docs/observability.md): API nodes from CLUSTER_METRICS_PORT + 1, workers from + 21, media nodes from + 41.
    const metricsBase = port('CLUSTER_METRICS_PORT', 9500);
    const metricsPortOf = (role: AppRole, index: number) => metricsBase + { api: 0, worker: 20, media: 40 }[role] + index;
    const metricsUrls: string[] = [];
    const start = async (role: AppRole, index: number, nodePort?: number) => {
      const env = { ...childEnv, METRICS_PORT: String(metricsPortOf(role, index)) };
      metricsUrls.push(`${role}-${index} http://${childEnv.METRICS_HOST || '127.0.0.1'}:${env.METRICS_PORT}/metrics`);
      const node = await startAppNode({ role, index, host, port: nodePort, env, output: 'inherit-prefixed', ownProcessGroup: true });
      application.push(node);
      void node.process.exited.then((code) => stopping() || console.error(`[launcher] ${node.name} exited (${code}); the other ${role} nodes carry on`));
    };
    await Promise.all([
      ...Array.from({ length: nodes.api }, (_, i) => start('api', i + 1, apiNodePort + i)),
      ...Array.from({ length: nodes.worker }, (_, i) => start('worker', i + 1)),
      ...Array.from({ length: nodes.media }, (_, i) => start('media', i + 1, mediaPort + i)),
    ]);
    balancer = await startLoadBalancer({
      host,
      port: apiPort,
      backends: Array.from({ length: nodes.api }, (_, i) => ({ host: host === '0.0.0.0' ? '127.0.0.1' : host, port: apiNodePort + i })),
    });

    printReady('Voice agent service (cluster profile) is up:', [
      `  API          http://${host}:${apiPort}/api/v1   (load balancer over ${nodes.api} API nodes: ${application
        .filter((n) => n.role === 'api')
        .map((n) => n.port)
        .join(', ')})`,
      `  Media        ${application
        .filter((n) => n.role === 'media')
        .map((n) => `http://${host}:${n.port}`)
        .join(', ')}`,
      `  Workers      ${nodes.worker} nodes (all task queues)`,
      `  Metrics      ${metricsUrls.sort().join(', ')}`,
      `  Temporal UI  ${temporal.uiUrl}   (decodes payloads through ${codec.endpoint})`,
      `  Payload key  ${env.TEMPORAL_PAYLOAD_KEYS ? 'TEMPORAL_PAYLOAD_KEYS' : path.join(localDataDir(env), LOCAL_PAYLOAD_KEY_FILE)} (Temporal payloads are encrypted)`,
      `  Temporal     ${temporal.address} (namespace ${namespace}; server ${TEMPORAL_SERVER_VERSION} on PostgreSQL 127.0.0.1:${temporal.postgres.port})`,
      ...simulators.lines,
      `  MongoDB      ${redact(childEnv.MONGODB_URI ?? '')}`,
    ]);
  } catch (err) {
    console.error(`[launcher] ${(err as Error).message}`);
    await stopAll(1);
  }
}

void main();
