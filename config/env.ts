/**
 * The one typed view of the environment. Every process reads its settings here, so a
 * variable has one name, one default and one parser. Defaults run the local stack; in
 * production (NODE_ENV=production) the addresses of external servers must be given.
 */

export interface Config {
  env: 'development' | 'test' | 'production';
  /** API port. */
  port: number;
  /** Media service port (telephony audio streams, browser calls). */
  mediaPort: number;
  /** Address the API and media service bind to. */
  host: string;
  mongodbUri: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** Zone used when a request names none (query `timezone` or header `X-Timezone`). */
  defaultTimezone: string;
  /** Check every response against the OpenAPI document (on in tests, off in production). */
  validateResponses: boolean;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** How long `POST /health/roundtrip` waits for its workflow before answering 503. */
  roundTripWaitMs: number;
}

type Env = Record<string, string | undefined>;

/** The database the service uses on the local (embedded) server. */
export const DATABASE_NAME = 'voice_agents';
export const LOCAL_MONGODB_URI = `mongodb://127.0.0.1:27017/${DATABASE_NAME}`;
export const LOCAL_TEMPORAL_ADDRESS = '127.0.0.1:7233';

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = parseEnum(env, 'NODE_ENV', ['development', 'test', 'production'] as const, 'development');
  const production = nodeEnv === 'production';
  return {
    env: nodeEnv,
    port: parsePort(env, 'PORT', 8080),
    mediaPort: parsePort(env, 'MEDIA_PORT', 8081),
    host: env.HOST || '127.0.0.1',
    mongodbUri: required(env, 'MONGODB_URI', production ? undefined : LOCAL_MONGODB_URI),
    temporalAddress: required(env, 'TEMPORAL_ADDRESS', production ? undefined : LOCAL_TEMPORAL_ADDRESS),
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    defaultTimezone: env.DEFAULT_TIMEZONE || 'Asia/Kolkata',
    validateResponses: parseBoolean(env, 'VALIDATE_RESPONSES', nodeEnv === 'test'),
    logLevel: parseEnum(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    roundTripWaitMs: parsePositiveInteger(env, 'ROUND_TRIP_WAIT_MS', 60_000),
  };
}

function required(env: Env, name: string, fallback: string | undefined): string {
  const value = env[name] || fallback;
  if (!value) throw new Error(`${name} must be set when NODE_ENV=production`);
  return value;
}

export function parsePort(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${name} must be a port number from 0 to 65535, got "${raw}"`);
  }
  return port;
}

function parsePositiveInteger(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

function parseBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name]}"`);
}

function parseEnum<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
}
