import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { loadConfig } from '../../config/env';
import { SEARCH_ATTRIBUTE_KEYS } from '../../contracts/search-attributes';
import {
  CLUSTER_DYNAMIC_CONFIG,
  defaultClusterPorts,
  NUM_HISTORY_SHARDS,
  startTemporalCluster,
  TEMPORAL_DATABASES,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_SERVER_VERSION,
  uiServerConfig,
} from '../../scripts/infra/temporal-cluster';
import { codecServerEnv } from '../../scripts/infra/launcher';
import { BACKGROUND_CPU_SHARES } from '../../scripts/infra/cpu-priority';

const ROOT = path.resolve(__dirname, '../..');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: unknown;
  container_name?: string;
  configs?: { source: string; target: string }[];
  cpu_shares?: number;
}
const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  configs: Record<string, { content: string }>;
};
const services = compose.services;
const installer = fs.readFileSync(path.join(ROOT, 'scripts/install-tools.sh'), 'utf8');
const pinned = (name: string) => new RegExp(`^${name}="([^"]+)"`, 'm').exec(installer)?.[1];
const tag = (service: string) => services[service]!.image!.split(':')[1]!;

/** What `.env` must hold (the compose file's `${NAME:?...}`). */
const REQUIRED_SETTINGS: Record<string, string> = {
  AUTH_SECRET: 'a-secret-of-at-least-32-characters-long!',
  TEMPORAL_PAYLOAD_KEYS: `p1:${Buffer.alloc(32, 7).toString('base64')}`,
  DATA_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
};

/** The compose file's `${NAME:?...}` and `${NAME:-default}` as `docker compose` fills them with only the required settings set. */
function interpolated(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).map(([name, value]) => [
      name,
      value.replace(/\$\{([A-Z_]+):\?.*\}$/, (_, required: string) => REQUIRED_SETTINGS[required] ?? '').replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'),
    ]),
  );
}

/**
 * docker-compose.yml describes the cluster profile's topology with the same versions and
 * settings (scripts/infra/temporal-cluster.ts, scripts/install-tools.sh), and hands the
 * processes only variables config/env.ts reads, in values it accepts.
 */
describe('docker-compose.yml', () => {
  it('runs the production topology: PostgreSQL, the Temporal server with admin-tools and the UI, a MongoDB replica set, and the three processes', () => {
    expect(Object.keys(services).sort()).to.deep.equal([
      'api',
      'media',
      'mongo-1',
      'mongo-2',
      'mongo-3',
      'postgresql',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
      'temporal-ui',
      'worker',
    ]);
    expect(services.temporal!.image).to.match(/^temporalio\/server:/);
    expect(JSON.stringify(services.temporal)).not.to.contain('start-dev');
    for (const name of ['mongo-1', 'postgresql', 'temporal', 'api', 'media']) expect(services[name]!.healthcheck, `${name} health check`).to.be.an('object');
    expect(Number(tag('postgresql'))).to.be.at.least(12);
  });

  it('pins the Temporal server, admin-tools and UI at the installer versions', () => {
    expect(pinned('TEMPORAL_SERVER_VERSION')).to.equal(TEMPORAL_SERVER_VERSION);
    expect(pinned('TEMPORAL_UI_SERVER_VERSION')).to.equal(TEMPORAL_UI_SERVER_VERSION);
    const server = TEMPORAL_SERVER_VERSION.replace(/^v/, '');
    expect(tag('temporal')).to.equal(server);
    expect(tag('temporal-schema')).to.match(new RegExp(`^${server.replace(/\./g, '\\.')}-`));
    expect(tag('temporal-namespace')).to.equal(tag('temporal-schema'));
    expect(tag('temporal-ui')).to.equal(TEMPORAL_UI_SERVER_VERSION.replace(/^v/, ''));
  });

  it('configures Temporal as the cluster profile does: PostgreSQL 12 plugin, both databases, shards, dynamic config, namespace and search attributes', () => {
    const env = services.temporal!.environment!;
    expect([env.DB, env.DBNAME, env.VISIBILITY_DBNAME, Number(env.NUM_HISTORY_SHARDS)]).to.deep.equal([
      'postgres12',
      TEMPORAL_DATABASES.persistence,
      TEMPORAL_DATABASES.visibility,
      NUM_HISTORY_SHARDS,
    ]);
    const dynamic = services.temporal!.configs!.find((c) => c.source === 'temporal-dynamic-config')!;
    expect(dynamic.target).to.equal(`/etc/temporal/${env.DYNAMIC_CONFIG_FILE_PATH}`);
    expect(parse(compose.configs['temporal-dynamic-config']!.content)).to.deep.equal(CLUSTER_DYNAMIC_CONFIG);
    const schema = compose.configs['temporal-schema']!.content;
    for (const db of Object.values(TEMPORAL_DATABASES)) expect(schema).to.contain(db);
    expect(schema).to.contain('--plugin postgres12');
    const namespace = compose.configs['temporal-namespace']!.content;
    const registered = /for attribute in ([A-Za-z ]+); do/.exec(namespace)![1]!.split(' ');
    expect(registered).to.deep.equal(SEARCH_ATTRIBUTE_KEYS.map((key) => key.name));
    expect(SEARCH_ATTRIBUTE_KEYS.every((key) => key.type === 'KEYWORD')).to.equal(true);
    expect(namespace).to.contain('--type Keyword');
  });

  it("weighs the workflows' bookkeeping below the callee's audio path, as the launchers' nice does (0245)", () => {
    const shares = Object.fromEntries(Object.entries(services).map(([name, service]) => [name, service.cpu_shares ?? null]));
    for (const background of ['worker', 'temporal', 'postgresql', 'temporal-ui']) expect(shares[background], background).to.equal(BACKGROUND_CPU_SHARES);
    for (const audioPath of ['api', 'media', ...Object.keys(services).filter((name) => name.startsWith('mongo'))])
      expect(shares[audioPath], audioPath).to.equal(null);
  });

  it('lets api, worker and media scale: one image, no fixed container names, port ranges', () => {
    for (const name of ['api', 'worker', 'media']) {
      const service = services[name]!;
      expect(service.image, name).to.equal('voice-agent-service:local');
      expect(service.container_name, name).to.equal(undefined);
      for (const port of service.ports ?? []) expect(port, `${name} ports`).to.match(/^\d+-\d+:\d+$/);
    }
    expect(services.api!.command).to.deep.equal(['node', 'dist/api/server.js']);
    expect(services.worker!.command).to.deep.equal(['node', 'dist/workers/main.js']);
    expect(services.media!.command).to.deep.equal(['node', 'dist/media/server.js']);
  });

  it('hands each process only variables config/env.ts reads, and values it accepts in production', () => {
    const source = fs.readFileSync(path.join(ROOT, 'config/env.ts'), 'utf8');
    const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)|'([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] ?? m[2]));
    for (const name of ['api', 'worker', 'media']) {
      const env = interpolated(services[name]!.environment!);
      expect(
        Object.keys(env).filter((key) => !read.has(key)),
        `${name}: variables config/env.ts does not read`,
      ).to.deep.equal([]);
      const config = loadConfig({ ...env, TELEPHONY_BASE_URL: 'https://api.plivo.com', PLIVO_AUTH_ID: 'id', PLIVO_AUTH_TOKEN: 'token' });
      expect([config.env, config.temporalAddress, config.temporalNamespace]).to.deep.equal(['production', 'temporal:7233', 'default']);
      expect(config.mongodbUri).to.match(/^mongodb:\/\/mongo-1:27017,mongo-2:27017,mongo-3:27017\/voice_agents\?replicaSet=rs0$/);
    }
    // Each media replica announces its own address: {ip} is filled per container.
    const media = loadConfig({
      ...interpolated(services.media!.environment!),
      TELEPHONY_BASE_URL: 'https://api.plivo.com',
      PLIVO_AUTH_ID: 'id',
      PLIVO_AUTH_TOKEN: 'token',
    });
    expect(services.media!.environment!.MEDIA_PUBLIC_URL).to.contain('{ip}');
    expect(media.mediaPublicUrl).to.match(/^ws:\/\/\d+\.\d+\.\d+\.\d+:8081$/);
    expect(media.mediaPort).to.equal(8081);
    // A public deployment names each node by its host name instead.
    expect(loadConfig({ MEDIA_PUBLIC_URL: 'wss://{hostname}.media.example.com' }).mediaPublicUrl).to.equal(`wss://${os.hostname()}.media.example.com`);
  });

  it('needs the Temporal payload keys: the processes refuse to start in production without them', () => {
    for (const name of ['api', 'worker', 'media']) {
      const env = services[name]!.environment!;
      expect(env.TEMPORAL_PAYLOAD_KEYS, name).to.match(/^\$\{TEMPORAL_PAYLOAD_KEYS:\?/);
      const config = loadConfig(interpolated(env));
      expect(config.temporalPayloadKeys?.currentKeyId, name).to.equal('p1');
      expect(() => loadConfig({ ...interpolated(env), TEMPORAL_PAYLOAD_KEYS: '' }), name).to.throw('TEMPORAL_PAYLOAD_KEYS must be set');
    }
  });

  it('publishes the Temporal frontend and Web UI on loopback only, and nothing else of Temporal or the databases', () => {
    expect(services.temporal!.ports).to.deep.equal(['127.0.0.1:7233:7233']);
    expect(services['temporal-ui']!.ports).to.deep.equal(['127.0.0.1:8233:8233']);
    for (const name of ['postgresql', 'mongo-1', 'mongo-2', 'mongo-3', 'temporal-schema', 'temporal-namespace'])
      expect(services[name]!.ports, name).to.equal(undefined);
    // Every published port of any service binds an address, or is the API's or a media node's (public by design).
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) if (!['api', 'media'].includes(name)) expect(port, name).to.match(/^127\.0\.0\.1:/);
    }
  });

  it("points the Web UI at the API's codec server, which allows the UI's origin", () => {
    const ui = interpolated(services['temporal-ui']!.environment!);
    expect(ui.TEMPORAL_CODEC_ENDPOINT).to.equal('http://localhost:8080/codec');
    const api = loadConfig(interpolated(services.api!.environment!));
    expect(api.codecServer.uiOrigins).to.include('http://localhost:8233');
    // Unset, the production codec server answers 503 rather than serve without a credential.
    expect(api.codecServer.token).to.equal(null);
    expect(services.api!.environment!.CODEC_SERVER_TOKEN).to.match(/^\$\{CODEC_SERVER_TOKEN:-\}$/);
  });
});

describe('the cluster profile (npm run start:cluster)', () => {
  it('refuses to bind the Temporal server and its UI anywhere but loopback', async () => {
    for (const host of ['0.0.0.0', '192.168.1.20', '::']) {
      const error = await startTemporalCluster({
        host,
        dataDir: os.tmpdir(),
        ports: defaultClusterPorts(),
        postgresPort: 5432,
        namespace: 'default',
        output: { dir: os.tmpdir() },
      }).catch((err: Error) => err);
      expect(error, host).to.be.instanceOf(Error).with.property('message').that.contains('loopback');
    }
  });

  it("configures the UI server to decode through the API's codec server, whose CORS allows the UI", () => {
    const codec = codecServerEnv({}, 8080, 8233);
    expect(codec.endpoint).to.equal('http://127.0.0.1:8080/codec');
    expect(
      uiServerConfig({ host: '127.0.0.1', port: 8233, temporalAddress: '127.0.0.1:7233', namespace: 'default', codecEndpoint: codec.endpoint }),
    ).to.deep.include({ host: '127.0.0.1', codec: { endpoint: 'http://127.0.0.1:8080/codec' } });
    expect(loadConfig(codec.env).codecServer.uiOrigins).to.deep.equal(['http://localhost:8233', 'http://127.0.0.1:8233']);
    // A stack bound to every interface still sends the browser to this machine's address; given origins are kept.
    expect(codecServerEnv({ HOST: '0.0.0.0', TEMPORAL_UI_ORIGIN: 'https://temporal.example.com' }, 9000, 8233)).to.deep.equal({
      endpoint: 'http://127.0.0.1:9000/codec',
      env: {},
    });
  });
});
