import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_KEYS } from '../../contracts/search-attributes';
import { BACKGROUND_NICENESS } from './cpu-priority';
import { requireTool, startProcess, waitForPort, type ManagedProcess, type StartOptions } from './processes';
import { POSTGRES_USER, startPostgres, type RunningPostgres } from './postgres';
import { waitForNamespace } from './servers';

const run = promisify(execFile);

/**
 * The cluster profile's Temporal: the real server (`go.temporal.io/server`, all four services
 * in one process) on PostgreSQL for persistence and advanced visibility, and the Web UI server
 * in front of it. The same shape as docker-compose.yml's `temporal` and `temporal-ui`.
 */

/** Pinned in scripts/install-tools.sh and docker-compose.yml too (test/unit/docker-compose.test.ts checks they agree). */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_UI_SERVER_VERSION = 'v2.42.1';

/** Databases of the two stores, as in Temporal's own PostgreSQL setups. */
export const TEMPORAL_DATABASES = { persistence: 'temporal', visibility: 'temporal_visibility' } as const;
/** History shards: fixed for a cluster's life (cannot change without a new database). */
export const NUM_HISTORY_SHARDS = 4;

export interface TemporalClusterPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  /** Membership (ringpop) ports of frontend, history, matching and worker. */
  membership: [number, number, number, number];
  ui: number;
}

/** The well-known ports (those of Temporal's development configs), for `npm run start:cluster`. */
export function defaultClusterPorts(frontend = 7233, ui = 8233): TemporalClusterPorts {
  return { frontend, frontendHttp: 7243, history: 7234, matching: 7235, worker: 7239, membership: [6933, 6934, 6935, 6939], ui };
}

/**
 * Free ports for everything (tests and benchmarks run beside other servers). Below 32768:
 * the server records its services' ports in PostgreSQL as `smallint` (cluster_membership),
 * and the OS hands out ephemeral ports above that.
 */
export async function freeClusterPorts(): Promise<TemporalClusterPorts> {
  const taken = new Set<number>();
  const next = async () => {
    const port = await freeSmallPort(taken);
    taken.add(port);
    return port;
  };
  return {
    frontend: await next(),
    frontendHttp: await next(),
    history: await next(),
    matching: await next(),
    worker: await next(),
    membership: [await next(), await next(), await next(), await next()],
    ui: await next(),
  };
}

/** A port from 20000 to 32767 that accepts a listener right now (not one in `taken`). */
export async function freeSmallPort(taken: Set<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (!taken.has(port) && (await canListen(port))) return port;
  }
  throw new Error('found no free port from 20000 to 32767');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface TemporalClusterOptions {
  host?: string;
  /** PostgreSQL data, the server's and the UI's generated configuration. */
  dataDir: string;
  ports: TemporalClusterPorts;
  postgresPort: number;
  namespace: string;
  /** Tests: PostgreSQL without fsync. */
  fast?: boolean;
  /** Run the Web UI server (on ports.ui). */
  ui?: boolean;
  /** The codec server the UI decodes payloads through (`http://127.0.0.1:8080/codec`; docs/decisions/0201). */
  codecEndpoint?: string;
  /** Each process's output: printed with a prefix, or appended to `<dir>/<name>.log`. */
  output: 'inherit-prefixed' | { dir: string };
  ownProcessGroup?: boolean;
}

export interface TemporalCluster {
  address: string;
  uiUrl?: string;
  postgres: RunningPostgres;
  /** The current server process (replaced by restartServer). */
  server(): ManagedProcess;
  /**
   * Stops the server (SIGTERM, or SIGKILL with `kill`) and starts it again on the same ports and
   * data; answers when the old process had exited and when the new one served the namespace.
   */
  restartServer(options?: { kill?: boolean }): Promise<{ downAt: number; upAt: number }>;
  /** Every process of the cluster, for last-resort cleanup. */
  processes(): ManagedProcess[];
  /** UI first, then the server, then PostgreSQL. */
  stop(): Promise<void>;
}

export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const host = options.host ?? '127.0.0.1';
  // Whoever reaches the frontend or the UI reads and changes every workflow; neither has sign-in
  // here (docs/decisions/0202): this machine only.
  if (!isLoopbackAddress(host))
    throw new Error(
      `the Temporal cluster binds only to a loopback address, not ${host}: its frontend and Web UI have no sign-in (docs/operations.md, "Callers' data in Temporal")`,
    );
  const output = (name: string): StartOptions['output'] =>
    options.output === 'inherit-prefixed' ? 'inherit-prefixed' : { file: path.join(options.output.dir, `${name}.log`) };
  const started: ManagedProcess[] = [];
  const stopAll = async () => {
    for (const proc of [...started].reverse()) await proc.stop();
  };
  try {
    const postgres = await startPostgres({
      host,
      port: options.postgresPort,
      dataDir: path.join(options.dataDir, 'postgres'),
      fast: options.fast,
      output: output('postgres'),
      ownProcessGroup: options.ownProcessGroup,
      // Temporal's database: the workflows' bookkeeping, below the callee's audio on a shared host (0245).
      niceness: BACKGROUND_NICENESS,
    });
    started.push(postgres);
    await setUpTemporalSchemas(host, options.postgresPort);

    const serverRoot = path.join(options.dataDir, 'temporal-server');
    writeServerConfig(serverRoot, { host, ports: options.ports, postgresPort: options.postgresPort });
    const address = `${host}:${options.ports.frontend}`;
    const startServer = () => startTemporalServer(serverRoot, host, options.ports.frontend, output('temporal-server'), options.ownProcessGroup);
    let server = await startServer();
    started.push(server);
    // The server caches namespaces and search attributes for up to a minute: after a first
    // registration, a restart makes them usable at once rather than after the cache expires.
    if (await registerNamespaceAndSearchAttributes(address, options.namespace)) {
      await server.stop();
      started.splice(started.indexOf(server), 1);
      server = await startServer();
      started.push(server);
    }
    await waitForNamespace(address, options.namespace);

    let uiUrl: string | undefined;
    if (options.ui) {
      const uiRoot = path.join(options.dataDir, 'temporal-ui');
      writeUiConfig(uiRoot, { host, port: options.ports.ui, temporalAddress: address, namespace: options.namespace, codecEndpoint: options.codecEndpoint });
      const ui = startProcess({
        name: 'temporal-ui',
        command: requireTool('temporalUiServer'),
        args: ['--root', uiRoot, '--env', 'cluster', 'start'],
        output: output('temporal-ui'),
        ownProcessGroup: options.ownProcessGroup,
        niceness: BACKGROUND_NICENESS,
      });
      started.push(ui);
      await waitForPort(host, options.ports.ui, 30_000, ui);
      uiUrl = `http://${host}:${options.ports.ui}`;
    }

    return {
      address,
      uiUrl,
      postgres,
      server: () => server,
      async restartServer({ kill = false } = {}) {
        if (kill) {
          server.child.kill('SIGKILL');
          await server.exited;
        } else {
          await server.stop();
        }
        const downAt = Date.now();
        const index = started.indexOf(server);
        server = await startServer();
        started[index] = server;
        await waitForNamespace(address, options.namespace);
        return { downAt, upAt: Date.now() };
      },
      processes: () => [...started],
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Creates both databases on a fresh server and brings their schemas to the versions this
 * server needs (`update-schema` is a no-op when they already are): the schemas embedded in
 * Temporal's SQL tool, `postgresql/v12/{temporal,visibility}` of the module's `schema/`.
 */
export async function setUpTemporalSchemas(host: string, port: number): Promise<void> {
  const tool = requireTool('temporalSqlTool');
  for (const [database, schema] of [
    [TEMPORAL_DATABASES.persistence, 'postgresql/v12/temporal'],
    [TEMPORAL_DATABASES.visibility, 'postgresql/v12/visibility'],
  ] as const) {
    const sql = (args: string[]) =>
      run(tool, [
        '--plugin',
        'postgres12',
        '--ep',
        host,
        '--port',
        String(port),
        '--user',
        POSTGRES_USER,
        '--password',
        'unused-with-trust',
        '--db',
        database,
        ...args,
      ]);
    const exists = await sql(['create-database']).then(
      () => false,
      (err: Error & { stderr?: string }) => {
        if (/already exists/.test(String(err.stderr) + err.message)) return true;
        throw err;
      },
    );
    // setup-schema -v 0.0 creates only the version table, which update-schema then fills.
    if (!exists) await sql(['setup-schema', '-v', '0.0']);
    await sql(['update-schema', '--schema-name', schema]);
  }
}

interface ServerConfigInput {
  host: string;
  ports: TemporalClusterPorts;
  postgresPort: number;
}

/** `<root>/config/cluster.yaml` (the server's `--env cluster`) and its dynamic configuration. */
export function writeServerConfig(root: string, input: ServerConfigInput): void {
  fs.mkdirSync(path.join(root, 'config'), { recursive: true });
  const dynamicConfigFile = path.join(root, 'config', 'dynamic.yaml');
  fs.writeFileSync(path.join(root, 'config', 'cluster.yaml'), stringify(temporalServerConfig(input, dynamicConfigFile)));
  fs.writeFileSync(dynamicConfigFile, stringify(CLUSTER_DYNAMIC_CONFIG));
}

/**
 * The server's static configuration: Temporal's `development-postgres12.yaml` with our ports,
 * no archival, no metrics endpoint and no pprof (neither is used locally).
 */
export function temporalServerConfig(input: ServerConfigInput, dynamicConfigFile: string): Record<string, unknown> {
  const { host, ports } = input;
  const store = (database: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${host}:${input.postgresPort}`,
      connectProtocol: 'tcp',
      user: POSTGRES_USER,
      password: 'unused-with-trust',
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: host, ...extra },
  });
  return {
    log: { stdout: true, level: 'error' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: NUM_HISTORY_SHARDS,
      datastores: { 'postgres-default': store(TEMPORAL_DATABASES.persistence, 20), 'postgres-visibility': store(TEMPORAL_DATABASES.visibility, 10) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: host } },
    services: {
      frontend: service(ports.frontend, ports.membership[0], { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.membership[1]),
      matching: service(ports.matching, ports.membership[2]),
      worker: service(ports.worker, ports.membership[3]),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `${host}:${ports.frontend}`,
          httpAddress: `${host}:${ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
}

/**
 * The dev server's settings (scripts/infra/servers.ts), so that the two profiles differ only
 * in the server and its database; docker-compose.yml's dynamic config carries the same.
 */
export const CLUSTER_DYNAMIC_CONFIG = {
  'system.enableActivityEagerExecution': [{ value: true }],
  'matching.numTaskqueueReadPartitions': [{ value: 1 }],
  'matching.numTaskqueueWritePartitions': [{ value: 1 }],
  'limit.maxIDLength': [{ value: 255 }],
};

function startTemporalServer(
  root: string,
  host: string,
  frontendPort: number,
  output: StartOptions['output'],
  ownProcessGroup?: boolean,
): Promise<ManagedProcess> {
  const proc = startProcess({
    name: 'temporal-server',
    command: requireTool('temporalServer'),
    // No authorizer: the frontend listens on loopback only (docker-compose keeps it on its network).
    args: ['--root', root, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
    output,
    ownProcessGroup,
    // The workflows' bookkeeping: below the callee's audio on a shared host (0245).
    niceness: BACKGROUND_NICENESS,
  });
  return waitForPort(host, frontendPort, 120_000, proc).then(() => proc);
}

/**
 * The namespace and our custom search attributes (contracts/search-attributes.ts),
 * created when missing; on PostgreSQL 12+ they map to the visibility schema's typed columns,
 * so list queries on them work. Answers whether anything was created.
 */
export async function registerNamespaceAndSearchAttributes(address: string, namespace: string): Promise<boolean> {
  const connection = await connectWhenServing(address);
  try {
    let created = false;
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('3 days') });
      created = true;
    } catch (err) {
      if (!/already exists/i.test((err as Error).message)) throw err;
    }
    const existing = await untilNamespaceKnown(connection, namespace);
    const missing = SEARCH_ATTRIBUTE_KEYS.filter((key) => !(key.name in existing));
    if (missing.length) {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type)!])),
      });
      created = true;
    }
    return created;
  } finally {
    await connection.close();
  }
}

async function connectWhenServing(address: string): Promise<Connection> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const connection = await Connection.connect({ address });
      await connection.healthService.check({});
      return connection;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The namespace's custom search attributes, once the frontend knows the namespace. */
async function untilNamespaceKnown(connection: Connection, namespace: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const listed = await connection.operatorService.listSearchAttributes({ namespace });
      return listed.customAttributes ?? {};
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

interface UiServerInput {
  host: string;
  port: number;
  temporalAddress: string;
  namespace: string;
  codecEndpoint?: string;
}

/** `<root>/config/cluster.yaml` of the UI server (`--env cluster`). */
function writeUiConfig(root: string, input: UiServerInput): void {
  fs.mkdirSync(path.join(root, 'config'), { recursive: true });
  fs.writeFileSync(path.join(root, 'config', 'cluster.yaml'), stringify(uiServerConfig(input)));
}

/**
 * The UI server's configuration: on `host` (loopback), decoding payloads through the codec
 * server when one is given (its `codec.endpoint`; the browser calls it, CORS allowing the UI's
 * origin).
 */
export function uiServerConfig(input: UiServerInput): Record<string, unknown> {
  return {
    temporalGrpcAddress: input.temporalAddress,
    host: input.host,
    port: input.port,
    enableUi: true,
    defaultNamespace: input.namespace,
    refreshInterval: '1m',
    notifyOnNewVersion: false,
    cors: { cookieInsecure: true },
    ...(input.codecEndpoint ? { codec: { endpoint: input.codecEndpoint } } : {}),
  };
}

/** 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackAddress(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
