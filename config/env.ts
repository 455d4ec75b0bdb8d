import { isIP } from 'node:net';
import { createHash } from 'node:crypto';
import os from 'node:os';
import { parseDataKeys, type DataKeyRing } from '../contracts/secret-box';
import { DEFAULT_WEBHOOK_RETRY_CONCURRENCY } from '../contracts/task-queues';
import { DEFAULT_PRIVACY_PERIODS } from '../contracts/privacy';
import type { EmbeddingsConfig, LanguageModelsConfig, ProvidersConfig } from '../contracts/provider-settings';

export type { AzureOpenAiConfig, EmbeddingsConfig, LanguageModelsConfig, ProvidersConfig } from '../contracts/provider-settings';

/**
 * The one typed view of the environment. Every process reads its settings here, so a
 * variable has one name, one default and one parser. Defaults run the local stack; in
 * production (NODE_ENV=production) the addresses of external servers must be given.
 */

export interface PrivacyPeriodsConfig {
  /** Between `POST /workspace/close` and the erasure of the workspace's data (0210). */
  workspaceClosureGraceSeconds: number;
  /** How long KYC documents' bytes are kept after the decision on their submission (0211). */
  kycDocumentRetentionSeconds: number;
}

export interface Config {
  env: 'development' | 'test' | 'production';
  /** API port. */
  port: number;
  /** Media service port (telephony audio streams, browser calls). */
  mediaPort: number;
  /** Address the API and media service bind to. */
  host: string;
  /**
   * The API's public base, `/api/v1` included (`https://api.example.com/api/v1`): the
   * telephony provider posts its status callbacks under it, and their signatures cover it.
   */
  publicApiUrl: string;
  /**
   * This media node's public WebSocket base (`wss://media-1.example.com`): the telephony
   * provider connects the call's audio stream there, and browsers open browser calls there
   * (its http(s) form serves the call page). The API reads it too, as the address of a
   * browser call whose media node has not registered in time. Default `ws://<host>:<MEDIA_PORT>`.
   */
  mediaPublicUrl: string;
  mongodbUri: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** How to reach a Temporal that wants credentials (Temporal Cloud, a TLS frontend); null: plain gRPC. */
  temporalSecurity: TemporalSecurityConfig | null;
  /**
   * The keys that encrypt every payload written to Temporal (TEMPORAL_PAYLOAD_KEYS,
   * TEMPORAL_PAYLOAD_KEY_CURRENT; docs/decisions/0200). Required in production; null elsewhere
   * when unset (`npm start` makes a local key, tests bring their own).
   */
  temporalPayloadKeys: PayloadKeysConfig | null;
  /** The codec server for the Temporal Web UI and CLI (`/codec/encode`, `/codec/decode`; docs/decisions/0201). */
  codecServer: CodecServerConfig;
  /** Zone used when a request names none (query `timezone` or header `X-Timezone`). */
  defaultTimezone: string;
  /** Check every response against the OpenAPI document (on in tests, off in production). */
  validateResponses: boolean;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** How long `POST /health/roundtrip` waits for its workflow before answering 503. */
  roundTripWaitMs: number;
  /** Callers' data periods (docs/callers-data.md); tests only shorten them. */
  privacy: PrivacyPeriodsConfig;
  auth: AuthConfig;
  /**
   * Master keys of the secrets stored encrypted (tools' header values, webhook signing secrets,
   * TOTP secrets; docs/decisions/0196): `DATA_KEYS=kid1:base64key,kid2:base64key`, new values
   * under `DATA_KEY_CURRENT`, every key readable. Required in production; `npm start` makes and
   * keeps a local one in `.data/`; otherwise a fixed development key.
   */
  dataKeys: DataKeyRing;
  /** Credits every new workspace starts with, as a `grant` ledger item. */
  welcomeCreditsPaise: number;
  /** Let agents' HTTP tools reach private, loopback and link-local addresses (off: the SSRF guard refuses them). */
  toolsAllowPrivateNetworks: boolean;
  /**
   * Media nodes synthesize a call's welcome as soon as they know the call, and keep welcomes
   * the same for many calls in a bounded cache (`PREPARED_GREETINGS`, default on;
   * docs/decisions/0221). Off: the welcome is synthesized as any reply (for measuring the gain).
   */
  preparedGreetings: boolean;
  /**
   * New calls a second the telephony account takes (`TELEPHONY_CPS`, default 2: Plivo's published
   * default outbound CPS): every worker node dials at this pace together (docs/decisions/0166).
   */
  telephonyCps: number;
  /**
   * Let webhook deliveries reach private and loopback addresses. On by default outside
   * production (the contract allows `http://localhost` receivers for development), off in
   * production, where the SSRF guard refuses them.
   */
  webhooksAllowPrivateNetworks: boolean;
  /** Attempts one webhooks worker makes at once (each may wait up to 10 s on a slow target). */
  webhookAttemptConcurrency: number;
  /** Automatic webhook retries at once per worker (their own task queue). */
  webhookRetryConcurrency: number;
  providers: ProvidersConfig;
  /** Knowledge-base embeddings; null: retrieval ranks by BM25 alone (works offline). */
  embeddings: EmbeddingsConfig | null;
  /** Where recordings are kept: S3-compatible object storage, or (null) the database (docs/decisions/0214). */
  recordingsS3: RecordingsS3Config | null;
  billing: BillingConfig;
  /**
   * The reverse proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` the API believes
   * (Express's `trust proxy`): a hop count, or their addresses and ranges (`loopback`,
   * `10.0.0.0/8`). false: none, the socket's own address and protocol count.
   */
  trustProxy: false | number | string[];
  /** Origins (`https://console.example.com`) whose browser pages may call `/api` (CORS); empty: none. */
  corsOrigins: string[];
  /** This process's Prometheus endpoint (docs/observability.md); null: none. */
  metrics: MetricsConfig | null;
  /**
   * Where traces go over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, the OpenTelemetry variable:
   * `http://collector:4318`, spans posted to its `/v1/traces`); null: tracing is off.
   */
  otlpEndpoint: string | null;
}

/**
 * `/metrics` on a port of its own (METRICS_PORT; 0 picks a free one), never on the public API
 * port, bound to METRICS_HOST (default loopback: the scraper runs beside the process or the
 * operator opens the address deliberately).
 */
export interface MetricsConfig {
  host: string;
  port: number;
}

/**
 * Credentials for Temporal Cloud or a self-hosted frontend with TLS. An API key
 * (TEMPORAL_API_KEY) or a client certificate (TEMPORAL_TLS_CERT + TEMPORAL_TLS_KEY, mTLS)
 * turns TLS on; TEMPORAL_TLS=true turns it on alone (server-side TLS). Files are paths, read
 * when the connection is made (domain/shared/temporal.ts, temporalConnectionOptions).
 */
export interface TemporalSecurityConfig {
  apiKey: string | null;
  clientCertFile: string | null;
  clientKeyFile: string | null;
  /** A private CA of a self-hosted frontend; null: the system's roots. */
  caFile: string | null;
  serverName: string | null;
}

/**
 * AES-256 keys of Temporal payloads: every key decrypts (old histories stay readable after a
 * rotation); the current one encrypts what is written now.
 */
export interface PayloadKeysConfig {
  currentKeyId: string;
  keys: { id: string; key: Buffer }[];
}

/**
 * Who may use the codec server. `token` (CODEC_SERVER_TOKEN): the staff credential, sent as
 * `Authorization: Bearer`. Without one, only a development API bound to loopback serves it
 * (anyone on this machine: the development stack trusts it already); elsewhere it answers 503.
 * `uiOrigins` (TEMPORAL_UI_ORIGIN): the Web UI origins whose browsers may call it (CORS).
 */
export interface CodecServerConfig {
  token: string | null;
  uiOrigins: string[];
}

/** The platform as the seller on GST invoices; `state` decides CGST+SGST against IGST. */
export interface BillingConfig {
  sellerName: string;
  sellerGstin: string | null;
  /** ISO 3166-2:IN code without `IN-` (BILLING_SELLER_STATE, default KA, Karnataka). */
  sellerState: string;
}

export interface AuthConfig {
  /** Signs session tokens (HS256). Required in production; at least 32 characters. */
  secret: string;
  sessionTtlSeconds: number;
  /** log2 of scrypt's N for new password hashes (17 = 128 MiB per hash, OWASP's figure). */
  passwordHashLogN: number;
  /** Password hashes one process computes at once (default 4), and how many more may wait (default 64); beyond, 503. */
  passwordHashConcurrency?: number;
  passwordHashQueue?: number;
}

/** OpenAI's API; `LLM_OPENAI_BASE_URL` replaces it (a proxy, the local simulator). */
export const OPENAI_API_BASE_URL = 'https://api.openai.com/v1';
/** A generally available Azure OpenAI data-plane version with streaming, tools and `stream_options`. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** Used only outside production, where a missing AUTH_SECRET must not stop a local run. */
const DEVELOPMENT_AUTH_SECRET = 'development-only-secret-do-not-use-in-production';

type Env = Record<string, string | undefined>;

/** The database the service uses on the local (embedded) server. */
export const DATABASE_NAME = 'voice_agents';
export const LOCAL_MONGODB_URI = `mongodb://127.0.0.1:27017/${DATABASE_NAME}`;
export const LOCAL_TEMPORAL_ADDRESS = '127.0.0.1:7233';

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = parseEnum(env, 'NODE_ENV', ['development', 'test', 'production'] as const, 'development');
  const production = nodeEnv === 'production';
  const port = parsePort(env, 'PORT', 8080);
  const host = env.HOST || '127.0.0.1';
  return {
    env: nodeEnv,
    port,
    mediaPort: parsePort(env, 'MEDIA_PORT', 8081),
    host,
    publicApiUrl: publicApiUrl(env, production, host, port),
    mediaPublicUrl: mediaPublicUrl(env, production, host, parsePort(env, 'MEDIA_PORT', 8081)),
    mongodbUri: required(env, 'MONGODB_URI', production ? undefined : LOCAL_MONGODB_URI),
    temporalAddress: required(env, 'TEMPORAL_ADDRESS', production ? undefined : LOCAL_TEMPORAL_ADDRESS),
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    temporalSecurity: temporalSecurityConfig(env),
    defaultTimezone: env.DEFAULT_TIMEZONE || 'Asia/Kolkata',
    validateResponses: parseBoolean(env, 'VALIDATE_RESPONSES', nodeEnv === 'test'),
    logLevel: parseEnum(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    roundTripWaitMs: parsePositiveInteger(env, 'ROUND_TRIP_WAIT_MS', 60_000),
    privacy: privacyPeriodsConfig(env, production),
    auth: {
      secret: authSecret(env, production),
      sessionTtlSeconds: parsePositiveInteger(env, 'SESSION_TTL_HOURS', 24 * 14) * 3600,
      passwordHashLogN: parseIntegerInRange(env, 'PASSWORD_HASH_LOG_N', 10, 20, 17),
      passwordHashConcurrency: parseIntegerInRange(env, 'PASSWORD_HASH_CONCURRENCY', 1, 64, 4),
      passwordHashQueue: parseIntegerInRange(env, 'PASSWORD_HASH_QUEUE', 0, 10_000, 64),
    },
    dataKeys: dataKeys(env, production),
    welcomeCreditsPaise: parseIntegerInRange(env, 'WELCOME_CREDITS_PAISE', 0, 10_000_000_00, 50_000),
    toolsAllowPrivateNetworks: parseBoolean(env, 'TOOLS_ALLOW_PRIVATE_NETWORKS', false),
    preparedGreetings: parseBoolean(env, 'PREPARED_GREETINGS', true),
    telephonyCps: parseIntegerInRange(env, 'TELEPHONY_CPS', 1, 1_000, PLIVO_DEFAULT_OUTBOUND_CPS),
    webhooksAllowPrivateNetworks: parseBoolean(env, 'WEBHOOKS_ALLOW_PRIVATE_NETWORKS', !production),
    webhookAttemptConcurrency: parseIntegerInRange(env, 'WEBHOOK_ATTEMPT_CONCURRENCY', 1, 100_000, 2_000),
    webhookRetryConcurrency: parseIntegerInRange(env, 'WEBHOOK_RETRY_CONCURRENCY', 1, 100_000, DEFAULT_WEBHOOK_RETRY_CONCURRENCY),
    providers: providersConfig(env),
    embeddings: embeddingsConfig(env),
    recordingsS3: recordingsS3Config(env),
    trustProxy: trustProxy(env),
    corsOrigins: corsOrigins(env),
    metrics: metricsConfig(env, port),
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT ? baseUrl('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT) : null,
    billing: {
      sellerName: env.BILLING_SELLER_NAME || 'Voice Agents Platform',
      sellerGstin: env.BILLING_SELLER_GSTIN || null,
      sellerState: parseEnum(
        env,
        'BILLING_SELLER_STATE',
        [
          'AN',
          'AP',
          'AR',
          'AS',
          'BR',
          'CH',
          'CG',
          'DH',
          'DL',
          'GA',
          'GJ',
          'HR',
          'HP',
          'JK',
          'JH',
          'KA',
          'KL',
          'LA',
          'LD',
          'MP',
          'MH',
          'MN',
          'ML',
          'MZ',
          'NL',
          'OD',
          'PY',
          'PB',
          'RJ',
          'SK',
          'TN',
          'TS',
          'TR',
          'UP',
          'UK',
          'WB',
        ] as const,
        'KA',
      ),
    },
    // Last: a production config missing its addresses or AUTH_SECRET names those first.
    temporalPayloadKeys: payloadKeysConfig(env, production),
    codecServer: codecServerConfig(env),
  };
}

/** Names Express's `trust proxy` understands for address ranges (proxy-addr's). */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: unset or `false`, none; a number, that many proxies in front (the client is
 * that many addresses from the right of `X-Forwarded-For`); otherwise a comma list of proxy
 * addresses, CIDR ranges or range names. `true` (believe any sender) is refused: any client
 * could then name its own address and protocol.
 */
function trustProxy(env: Env): false | number | string[] {
  const value = env.TRUST_PROXY?.trim();
  if (!value || value === 'false') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 10) throw new Error(`TRUST_PROXY as a hop count must be 1 to 10, got ${value}`);
    return hops;
  }
  if (value === 'true')
    throw new Error("TRUST_PROXY=true would believe any client's X-Forwarded-For; name the proxies (addresses, CIDR ranges, loopback) or their number");
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const valid = PROXY_RANGE_NAMES.includes(entry) || (isIP(address) !== 0 && rest.length === 0 && (prefix === undefined || /^\d{1,3}$/.test(prefix)));
    if (!valid) throw new Error(`TRUST_PROXY: "${entry}" is not an address, a CIDR range or one of ${PROXY_RANGE_NAMES.join(', ')}`);
  }
  return entries;
}

/** CORS_ORIGINS: a comma list of exact origins (scheme, host and port; no path, no `*`). */
function metricsConfig(env: Env, apiPort: number): MetricsConfig | null {
  if (!env.METRICS_PORT) return null;
  const port = parsePort(env, 'METRICS_PORT', 0);
  // The API's port serves the public; its metrics never share it (a scrape endpoint is not for callers).
  if (port !== 0 && port === apiPort) throw new Error(`METRICS_PORT must differ from PORT (${apiPort}): metrics are never served on the public API port`);
  const host = env.METRICS_HOST || '127.0.0.1';
  if (host !== 'localhost' && !isIP(host)) throw new Error(`METRICS_HOST must be an IP address to bind to (127.0.0.1, 0.0.0.0, ::), got "${host}"`);
  return { host, port };
}

function corsOrigins(env: Env): string[] {
  const value = env.CORS_ORIGINS?.trim();
  if (!value) return [];
  return value.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // Reported below.
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new Error(`CORS_ORIGINS: "${origin}" is not an origin (like https://console.example.com, without a path or a trailing slash; "*" is not allowed)`);
    }
    return origin;
  });
}

function providersConfig(env: Env): ProvidersConfig {
  return {
    telephony: env.TELEPHONY_BASE_URL
      ? {
          baseUrl: baseUrl('TELEPHONY_BASE_URL', env.TELEPHONY_BASE_URL),
          authId: requiredWith(env, 'PLIVO_AUTH_ID', 'TELEPHONY_BASE_URL'),
          authToken: requiredWith(env, 'PLIVO_AUTH_TOKEN', 'TELEPHONY_BASE_URL'),
        }
      : null,
    tts: env.TTS_BASE_URL
      ? {
          baseUrl: baseUrl('TTS_BASE_URL', env.TTS_BASE_URL),
          apiKey: env.TTS_API_KEY ?? '',
          flavour: parseEnum(env, 'TTS_FLAVOUR', ['auto', 'openai', 'kokoro', 'speaches'] as const, 'auto'),
        }
      : null,
    llm: languageModelsConfig(env),
    stt: env.STT_BASE_URL ? { baseUrl: baseUrl('STT_BASE_URL', env.STT_BASE_URL, ['http', 'https', 'ws', 'wss']), apiKey: env.STT_API_KEY ?? '' } : null,
    timeoutMs: parseIntegerInRange(env, 'PROVIDER_TIMEOUT_MS', 100, 60_000, 5_000),
    payments: env.PAYMENTS_BASE_URL
      ? {
          baseUrl: baseUrl('PAYMENTS_BASE_URL', env.PAYMENTS_BASE_URL),
          keyId: requiredWith(env, 'RAZORPAY_KEY_ID', 'PAYMENTS_BASE_URL'),
          keySecret: requiredWith(env, 'RAZORPAY_KEY_SECRET', 'PAYMENTS_BASE_URL'),
          webhookSecret: env.RAZORPAY_WEBHOOK_SECRET || null,
        }
      : null,
  };
}

/** Config.providers.llm: each language-model provider from its own settings (docs/decisions/0190). */
export function languageModelsConfig(env: Env): LanguageModelsConfig | null {
  // One server for every provider sent `local` agents' model ids to OpenAI (model_not_found); a
  // deployment still setting them is told what replaced them rather than silently losing its model.
  for (const retired of ['LLM_BASE_URL', 'LLM_API_KEY']) {
    if (env[retired])
      throw new Error(
        `${retired} is replaced by one setting group per language-model provider: LLM_OPENAI_API_KEY (openai), LLM_AZURE_ENDPOINT and LLM_AZURE_API_KEY (azure_openai), LLM_LOCAL_BASE_URL (local); see docs/operations.md, "Configuration"`,
      );
  }
  if (env.LLM_OPENAI_BASE_URL && !env.LLM_OPENAI_API_KEY) throw new Error('LLM_OPENAI_API_KEY must be set when LLM_OPENAI_BASE_URL is set');
  const openai = env.LLM_OPENAI_API_KEY
    ? { baseUrl: baseUrl('LLM_OPENAI_BASE_URL', env.LLM_OPENAI_BASE_URL || OPENAI_API_BASE_URL), apiKey: env.LLM_OPENAI_API_KEY }
    : null;
  const azureSettings = ['LLM_AZURE_API_KEY', 'LLM_AZURE_API_VERSION', 'LLM_AZURE_DEPLOYMENT', 'LLM_AZURE_DEPLOYMENTS'].filter((name) => env[name]);
  if (!env.LLM_AZURE_ENDPOINT && azureSettings.length > 0)
    throw new Error(`LLM_AZURE_ENDPOINT must be set when ${azureSettings.join(', ')} ${azureSettings.length > 1 ? 'are' : 'is'} set`);
  const azureOpenai = env.LLM_AZURE_ENDPOINT
    ? {
        endpoint: baseUrl('LLM_AZURE_ENDPOINT', env.LLM_AZURE_ENDPOINT),
        apiKey: requiredWith(env, 'LLM_AZURE_API_KEY', 'LLM_AZURE_ENDPOINT'),
        apiVersion: env.LLM_AZURE_API_VERSION || DEFAULT_AZURE_API_VERSION,
        deployments: azureDeployments(env.LLM_AZURE_DEPLOYMENTS ?? ''),
        deployment: env.LLM_AZURE_DEPLOYMENT || null,
      }
    : null;
  const localSettings = ['LLM_LOCAL_API_KEY', 'LLM_LOCAL_MODEL'].filter((name) => env[name]);
  if (!env.LLM_LOCAL_BASE_URL && localSettings.length > 0)
    throw new Error(`LLM_LOCAL_BASE_URL must be set when ${localSettings.join(', ')} ${localSettings.length > 1 ? 'are' : 'is'} set`);
  const local = env.LLM_LOCAL_BASE_URL
    ? { baseUrl: baseUrl('LLM_LOCAL_BASE_URL', env.LLM_LOCAL_BASE_URL), apiKey: env.LLM_LOCAL_API_KEY ?? '', model: env.LLM_LOCAL_MODEL || null }
    : null;
  return openai || azureOpenai || local ? { openai, azureOpenai, local } : null;
}

/** The variables that configure `config` (languageModelsConfig's inverse): for the processes a launcher or a test starts. */
export function languageModelsEnv(config: LanguageModelsConfig | null): Record<string, string> {
  const env: Record<string, string> = {};
  if (config?.openai) Object.assign(env, { LLM_OPENAI_BASE_URL: config.openai.baseUrl, LLM_OPENAI_API_KEY: config.openai.apiKey });
  const azure = config?.azureOpenai;
  if (azure) {
    Object.assign(env, { LLM_AZURE_ENDPOINT: azure.endpoint, LLM_AZURE_API_KEY: azure.apiKey, LLM_AZURE_API_VERSION: azure.apiVersion });
    const pairs = Object.entries(azure.deployments).map(([model, deployment]) => `${model}=${deployment}`);
    if (pairs.length) env.LLM_AZURE_DEPLOYMENTS = pairs.join(',');
    if (azure.deployment) env.LLM_AZURE_DEPLOYMENT = azure.deployment;
  }
  const local = config?.local;
  if (local) {
    env.LLM_LOCAL_BASE_URL = local.baseUrl;
    if (local.apiKey) env.LLM_LOCAL_API_KEY = local.apiKey;
    if (local.model) env.LLM_LOCAL_MODEL = local.model;
  }
  return env;
}

/** `gpt-4o-mini=mini-prod,gpt-4o=4o-prod`: the deployment of each model. */
function azureDeployments(raw: string): Record<string, string> {
  const deployments: Record<string, string> = {};
  for (const pair of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([^=\s]+)\s*=\s*([^=\s]+)$/.exec(pair);
    if (!match) throw new Error(`LLM_AZURE_DEPLOYMENTS must be a comma list of model=deployment pairs (gpt-4o-mini=mini-prod,gpt-4o=4o-prod), got "${pair}"`);
    if (deployments[match[1]!]) throw new Error(`LLM_AZURE_DEPLOYMENTS names model "${match[1]}" twice`);
    deployments[match[1]!] = match[2]!;
  }
  return deployments;
}

function temporalSecurityConfig(env: Env): TemporalSecurityConfig | null {
  const cert = env.TEMPORAL_TLS_CERT || null;
  const key = env.TEMPORAL_TLS_KEY || null;
  if (!cert !== !key) throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (the client certificate and its key, for mTLS)');
  const apiKey = env.TEMPORAL_API_KEY || null;
  const tls = parseBoolean(env, 'TEMPORAL_TLS', !!(apiKey || cert));
  if (!tls) {
    if (apiKey || cert) throw new Error('TEMPORAL_TLS=false cannot go with TEMPORAL_API_KEY or a client certificate: credentials travel only over TLS');
    return null;
  }
  return { apiKey, clientCertFile: cert, clientKeyFile: key, caFile: env.TEMPORAL_TLS_CA || null, serverName: env.TEMPORAL_TLS_SERVER_NAME || null };
}

/** The size of an AES-256 key. */
const PAYLOAD_KEY_BYTES = 32;
/** Key ids travel in every payload's metadata and in file names: short and plain. */
const PAYLOAD_KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * TEMPORAL_PAYLOAD_KEYS: `id:base64,id:base64` (each key 32 random bytes, `openssl rand -base64
 * 32`); TEMPORAL_PAYLOAD_KEY_CURRENT names the one that encrypts, needed when there are several.
 * Required in production: a service that would write callers' data to Temporal in plaintext
 * does not start.
 */
export function payloadKeysConfig(env: Env, production: boolean): PayloadKeysConfig | null {
  const raw = env.TEMPORAL_PAYLOAD_KEYS?.trim();
  if (!raw) {
    if (production)
      throw new Error(
        'TEMPORAL_PAYLOAD_KEYS must be set when NODE_ENV=production (id:base64 of a 32-byte key, e.g. `p1:$(openssl rand -base64 32)`): payloads are encrypted before Temporal stores them',
      );
    if (env.TEMPORAL_PAYLOAD_KEY_CURRENT) throw new Error('TEMPORAL_PAYLOAD_KEY_CURRENT is set without TEMPORAL_PAYLOAD_KEYS');
    return null;
  }
  const keys: PayloadKeysConfig['keys'] = [];
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const separator = entry.indexOf(':');
    const id = separator > 0 ? entry.slice(0, separator) : '';
    if (!PAYLOAD_KEY_ID.test(id))
      throw new Error('TEMPORAL_PAYLOAD_KEYS must be a comma list of id:base64 pairs, each id of letters, digits, dot, dash or underscore (at most 64)');
    if (keys.some((k) => k.id === id)) throw new Error(`TEMPORAL_PAYLOAD_KEYS names key "${id}" twice`);
    const encoded = entry.slice(separator + 1);
    const key = Buffer.from(encoded, 'base64');
    // The message names the key, never its bytes: configuration errors end up in logs.
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) || key.length !== PAYLOAD_KEY_BYTES)
      throw new Error(`TEMPORAL_PAYLOAD_KEYS: key "${id}" must be ${PAYLOAD_KEY_BYTES} bytes in base64 (openssl rand -base64 32)`);
    keys.push({ id, key });
  }
  if (!keys.length) throw new Error('TEMPORAL_PAYLOAD_KEYS holds no key');
  const current = env.TEMPORAL_PAYLOAD_KEY_CURRENT?.trim() || (keys.length === 1 ? keys[0]!.id : '');
  if (!current) throw new Error(`TEMPORAL_PAYLOAD_KEY_CURRENT must name the key that encrypts, one of ${keys.map((k) => k.id).join(', ')}`);
  if (!keys.some((k) => k.id === current))
    throw new Error(`TEMPORAL_PAYLOAD_KEY_CURRENT is "${current}", which TEMPORAL_PAYLOAD_KEYS does not hold (${keys.map((k) => k.id).join(', ')})`);
  return { currentKeyId: current, keys };
}

/** TEMPORAL_PAYLOAD_KEYS and TEMPORAL_PAYLOAD_KEY_CURRENT of `keys` (payloadKeysConfig's inverse): for the processes a launcher or a test starts. */
export function payloadKeysEnv(keys: PayloadKeysConfig): Record<string, string> {
  return { TEMPORAL_PAYLOAD_KEYS: keys.keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(','), TEMPORAL_PAYLOAD_KEY_CURRENT: keys.currentKeyId };
}

function codecServerConfig(env: Env): CodecServerConfig {
  const token = env.CODEC_SERVER_TOKEN || null;
  if (token !== null && token.length < 32) throw new Error('CODEC_SERVER_TOKEN must be at least 32 characters (openssl rand -hex 32)');
  const uiOrigins = (env.TEMPORAL_UI_ORIGIN ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((origin) => {
      // An origin is scheme://host[:port], exactly as the browser sends it in `Origin`.
      if (!/^https?:\/\/[^/\s]+$/.test(origin))
        throw new Error(`TEMPORAL_UI_ORIGIN must be a comma list of origins like http://localhost:8233 (no path), got "${origin}"`);
      return origin.toLowerCase();
    });
  return { token, uiOrigins };
}

/** MEDIA_PUBLIC_URL, or the local media service's own address (required in production with telephony). */
function mediaPublicUrl(env: Env, production: boolean, host: string, port: number): string {
  if (env.MEDIA_PUBLIC_URL) {
    if (!/^(wss?|https?):\/\/[^/]+/.test(env.MEDIA_PUBLIC_URL)) throw new Error(`MEDIA_PUBLIC_URL must be a ws(s) URL, got "${env.MEDIA_PUBLIC_URL}"`);
    return expandNodeAddress(env.MEDIA_PUBLIC_URL).replace(/^http/, 'ws').replace(/\/+$/, '');
  }
  if (production && env.TELEPHONY_BASE_URL)
    throw new Error('MEDIA_PUBLIC_URL must be set when TELEPHONY_BASE_URL is set and NODE_ENV=production (the provider connects audio streams to it)');
  return `ws://${localAuthority(host, port)}`;
}

/**
 * Several media nodes share one environment (`docker compose --scale media=3`, a Kubernetes
 * StatefulSet), yet each must announce its own address: `{hostname}` becomes this machine's
 * host name (a container's or pod's), `{ip}` its first non-loopback IPv4 address.
 */
function expandNodeAddress(url: string): string {
  return url.replaceAll('{hostname}', os.hostname()).replaceAll('{ip}', () => {
    const address = Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
    if (!address) throw new Error('MEDIA_PUBLIC_URL has {ip}, but this machine has no non-loopback IPv4 address');
    return address;
  });
}

/** `host:port` as this machine's clients reach a server bound to `host` (a wildcard bind address as loopback; IPv6 in brackets). */
function localAuthority(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * PUBLIC_API_URL, or the local API's own address (`http://<host>:<port>/api/v1`, a wildcard
 * bind address as loopback). A real provider cannot reach a local address, and each process
 * (API, workers) would derive its own from its own HOST/PORT, so production with telephony
 * configured must name it.
 */
function publicApiUrl(env: Env, production: boolean, host: string, port: number): string {
  if (env.PUBLIC_API_URL) return baseUrl('PUBLIC_API_URL', env.PUBLIC_API_URL);
  if (production && env.TELEPHONY_BASE_URL)
    throw new Error('PUBLIC_API_URL must be set when TELEPHONY_BASE_URL is set and NODE_ENV=production (the provider posts call statuses to it)');
  return `http://${localAuthority(host, port)}/api/v1`;
}

/** Config.embeddings: the API (uploads, search) and the media nodes (retrieval during calls) are given it at start. */
export function embeddingsConfig(env: Env): EmbeddingsConfig | null {
  if (!env.EMBEDDINGS_BASE_URL) return null;
  return {
    baseUrl: baseUrl('EMBEDDINGS_BASE_URL', env.EMBEDDINGS_BASE_URL),
    apiKey: env.EMBEDDINGS_API_KEY ?? '',
    model: env.EMBEDDINGS_MODEL || 'text-embedding-3-small',
  };
}

function baseUrl(name: string, value: string, schemes: string[] = ['http', 'https']): string {
  const scheme = /^([a-z]+):\/\/[^/]+/.exec(value)?.[1];
  if (!scheme || !schemes.includes(scheme)) throw new Error(`${name} must be a ${schemes.join(' or ')} URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}

function requiredWith(env: Env, name: string, because: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} must be set when ${because} is set`);
  return value;
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

/**
 * `WORKSPACE_CLOSURE_GRACE_SECONDS` and `KYC_DOCUMENT_RETENTION_SECONDS` exist for tests and
 * local trials only: the periods are promises to customers (docs/callers-data.md), so
 * production refuses them.
 */
function privacyPeriodsConfig(env: Env, production: boolean): PrivacyPeriodsConfig {
  const names = ['WORKSPACE_CLOSURE_GRACE_SECONDS', 'KYC_DOCUMENT_RETENTION_SECONDS'];
  const given = names.filter((name) => env[name] !== undefined && env[name] !== '');
  if (production && given.length) throw new Error(`${given.join(' and ')}: for tests only; unset in production (the stated periods apply)`);
  return {
    workspaceClosureGraceSeconds: parsePositiveInteger(env, 'WORKSPACE_CLOSURE_GRACE_SECONDS', DEFAULT_PRIVACY_PERIODS.workspaceClosureGraceSeconds),
    kycDocumentRetentionSeconds: parsePositiveInteger(env, 'KYC_DOCUMENT_RETENTION_SECONDS', DEFAULT_PRIVACY_PERIODS.kycDocumentRetentionSeconds),
  };
}

function parsePositiveInteger(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

function authSecret(env: Env, production: boolean): string {
  const secret = required(env, 'AUTH_SECRET', production ? undefined : DEVELOPMENT_AUTH_SECRET);
  if (secret.length < 32) throw new Error('AUTH_SECRET must be at least 32 characters');
  return secret;
}

/**
 * Used only outside production without DATA_KEYS (tests, a process started by hand): public,
 * so what it encrypts is as good as plaintext to anyone who reads this file.
 */
export const DEVELOPMENT_DATA_KEY_ID = 'development';
const DEVELOPMENT_DATA_KEY = createHash('sha256').update('development-only-data-key-do-not-use-in-production').digest('base64');

function dataKeys(env: Env, production: boolean): DataKeyRing {
  if (env.DATA_KEYS) return parseDataKeys(env.DATA_KEYS, env.DATA_KEY_CURRENT || undefined);
  if (production)
    throw new Error(
      'DATA_KEYS must be set when NODE_ENV=production (the keys that encrypt stored secrets: <key id>:<base64 of 32 random bytes>, e.g. k1:$(openssl rand -base64 32))',
    );
  if (env.DATA_KEY_CURRENT) throw new Error('DATA_KEY_CURRENT is set without DATA_KEYS');
  return parseDataKeys(`${DEVELOPMENT_DATA_KEY_ID}:${DEVELOPMENT_DATA_KEY}`, undefined);
}

/** Plivo's published default outbound calls per second (docs.plivo.com, "Account and feature limits"; in India the concurrency limit is CPS x 25). */
const PLIVO_DEFAULT_OUTBOUND_CPS = 2;

function parseIntegerInRange(env: Env, name: string, min: number, max: number, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
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

/** Recordings in S3-compatible object storage (docs/decisions/0214); null: in the database, as by default. */
export interface RecordingsS3Config {
  endpoint: string | null;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** SSE-KMS under this key; null: SSE-S3 (AES256). Either way every put asks for encryption. */
  kmsKeyId: string | null;
}

/**
 * RECORDINGS_S3_BUCKET turns the object store on; RECORDINGS_S3_REGION, _ACCESS_KEY_ID and
 * _SECRET_ACCESS_KEY must then be set, RECORDINGS_S3_ENDPOINT names an S3-compatible server
 * (unset: AWS), RECORDINGS_S3_KMS_KEY_ID asks for SSE-KMS instead of SSE-S3. Any of them without
 * the bucket is a mistake, refused at start rather than silently keeping recordings elsewhere.
 */
export function recordingsS3Config(env: Env): RecordingsS3Config | null {
  const names = ['ENDPOINT', 'REGION', 'ACCESS_KEY_ID', 'SECRET_ACCESS_KEY', 'KMS_KEY_ID'].map((n) => `RECORDINGS_S3_${n}`);
  if (!env.RECORDINGS_S3_BUCKET) {
    const stray = names.filter((name) => env[name]);
    if (stray.length) throw new Error(`${stray.join(', ')} set without RECORDINGS_S3_BUCKET: set the bucket too, or unset them`);
    return null;
  }
  const because = 'RECORDINGS_S3_BUCKET';
  return {
    endpoint: env.RECORDINGS_S3_ENDPOINT ? baseUrl('RECORDINGS_S3_ENDPOINT', env.RECORDINGS_S3_ENDPOINT) : null,
    bucket: env.RECORDINGS_S3_BUCKET,
    region: requiredWith(env, 'RECORDINGS_S3_REGION', because),
    accessKeyId: requiredWith(env, 'RECORDINGS_S3_ACCESS_KEY_ID', because),
    secretAccessKey: requiredWith(env, 'RECORDINGS_S3_SECRET_ACCESS_KEY', because),
    kmsKeyId: env.RECORDINGS_S3_KMS_KEY_ID || null,
  };
}
