import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { loadConfig } from '../../config/env';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/shared/search-attributes';
import { CLUSTER_DYNAMIC_CONFIG, NUM_HISTORY_SHARDS, TEMPORAL_DATABASES, TEMPORAL_SERVER_VERSION, TEMPORAL_UI_SERVER_VERSION } from '../../scripts/infra/temporal-cluster';

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
}
const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; configs: Record<string, { content: string }> };
const services = compose.services;
const installer = fs.readFileSync(path.join(ROOT, 'scripts/install-tools.sh'), 'utf8');
const pinned = (name: string) => new RegExp(`^${name}="([^"]+)"`, 'm').exec(installer)?.[1];
const tag = (service: string) => services[service]!.image!.split(':')[1]!;

/** The compose file's `${NAME:?...}` and `${NAME:-default}` as `docker compose` fills them with only AUTH_SECRET and DATA_KEYS set. */
function interpolated(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).map(([name, value]) => [name, value.replace(/\$\{AUTH_SECRET:\?[^}]*\}/, 'a-secret-of-at-least-32-characters-long!').replace(/\$\{DATA_KEYS:\?[^}]*\}/, `k1:${Buffer.alloc(32, 7).toString('base64')}`).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]),
  );
}

/**
 * docker-compose.yml describes the cluster profile's topology with the same versions and
 * settings (scripts/infra/temporal-cluster.ts, scripts/install-tools.sh), and hands the
 * processes only variables config/env.ts reads, in values it accepts.
 */
describe('docker-compose.yml', () => {
  it('runs the production topology: PostgreSQL, the Temporal server with admin-tools and the UI, a MongoDB replica set, and the three processes', () => {
    expect(Object.keys(services).sort()).to.deep.equal(['api', 'media', 'mongo-1', 'mongo-2', 'mongo-3', 'postgresql', 'temporal', 'temporal-namespace', 'temporal-schema', 'temporal-ui', 'worker']);
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
    expect([env.DB, env.DBNAME, env.VISIBILITY_DBNAME, Number(env.NUM_HISTORY_SHARDS)]).to.deep.equal(['postgres12', TEMPORAL_DATABASES.persistence, TEMPORAL_DATABASES.visibility, NUM_HISTORY_SHARDS]);
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
      expect(Object.keys(env).filter((key) => !read.has(key)), `${name}: variables config/env.ts does not read`).to.deep.equal([]);
      const config = loadConfig({ ...env, TELEPHONY_BASE_URL: 'https://api.plivo.com', PLIVO_AUTH_ID: 'id', PLIVO_AUTH_TOKEN: 'token' });
      expect([config.env, config.temporalAddress, config.temporalNamespace]).to.deep.equal(['production', 'temporal:7233', 'default']);
      expect(config.mongodbUri).to.match(/^mongodb:\/\/mongo-1:27017,mongo-2:27017,mongo-3:27017\/voice_agents\?replicaSet=rs0$/);
    }
    // Each media replica announces its own address: {ip} is filled per container.
    const media = loadConfig({ ...interpolated(services.media!.environment!), TELEPHONY_BASE_URL: 'https://api.plivo.com', PLIVO_AUTH_ID: 'id', PLIVO_AUTH_TOKEN: 'token' });
    expect(services.media!.environment!.MEDIA_PUBLIC_URL).to.contain('{ip}');
    expect(media.mediaPublicUrl).to.match(/^ws:\/\/\d+\.\d+\.\d+\.\d+:8081$/);
    expect(media.mediaPort).to.equal(8081);
    // A public deployment names each node by its host name instead.
    expect(loadConfig({ MEDIA_PUBLIC_URL: 'wss://{hostname}.media.example.com' }).mediaPublicUrl).to.equal(`wss://${os.hostname()}.media.example.com`);
  });
});
