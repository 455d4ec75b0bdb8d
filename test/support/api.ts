import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { createApp } from '../../api/app';
import { ADDRESS_LIMITS, type Allowance, type LimitedAction } from '../../api/auth/address-limits';
import type { Logger } from '../../domain/shared/logger';
import type { PrivacyPeriodsConfig, ProvidersConfig } from '../../config/env';
import { systemClock } from '../../activities';
import { createProviders } from '../../providers';
import { createPaymentGateway } from '../../providers/payments/gateway';
import { sellerOf } from '../../domain/billing/invoices';
import { startMediaService, type RunningMediaService } from '../../media/service';
import { createWorkers } from '../../workers/bootstrap';
import type { TaskQueueRole } from '../../contracts/task-queues';
import type { EmbeddingsConfig } from '../../config/env';
import { createLocal, workflowBundle } from './servers';
import { useTestDataKeys } from './data-keys';
import { testCodecServer } from './codec-server';
import type { CodecServerDeps } from '../../api/codec-server';

/** A fetch Response whose JSON tests read without declaring every shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ApiResponse = Omit<Response, 'json'> & { json(): Promise<any> };

export interface RunningApi {
  baseUrl: string;
  /** `fetch` against the API; paths are relative to the server root, e.g. `/api/v1/health`. */
  request(path: string, init?: RequestInit): Promise<ApiResponse>;
  /** The media service, when started (`media: true`). */
  media: RunningMediaService | null;
  close(): Promise<void>;
}

export interface StartApiOptions {
  /** Temporal client of the app (default: the shared dev server's). */
  temporal?: Client;
  /** The telephony account's pace for the workers' dials (TELEPHONY_CPS); absent: not paced. */
  dialsPerSecond?: number;
  /** Run real workers for these roles beside the API (on the shared dev server by default). */
  workers?: TaskQueueRole[];
  workerConnection?: NativeConnection;
  namespace?: string;
  extraRoutes?: (app: Express) => void;
  logger?: Logger;
  roundTripWaitMs?: number;
  /** Knowledge retrieval's embeddings endpoint (default: none, BM25 alone). */
  embeddings?: EmbeddingsConfig | null;
  /** Let HTTP tools reach private addresses (default true: tool tests call servers on 127.0.0.1). */
  toolsAllowPrivateNetworks?: boolean;
  /** The API's clock (time-window tests move it). */
  now?: () => Date;
  /**
   * Outside services, e.g. simulators started by the test (default: none, their endpoints
   * answer 502). The workers dial calls through them, with status callbacks to this API.
   */
  providers?: ProvidersConfig;
  /** Start the media service too (needs `providers`): calls then run their conversations. */
  media?: boolean;
  /** The payment checks' schedule in seconds (docs/decisions/0186); none: the production one. */
  paymentCheckDelaysSeconds?: number[];
  /** The callers' data periods (the closing's grace, KYC documents' retention); none: the stated ones. */
  privacy?: PrivacyPeriodsConfig;
  /** Origins allowed to call /api from a browser (default none: CORS off). */
  corsOrigins?: string[];
  /** Proxies whose X-Forwarded-* headers the app believes (default none). */
  trustProxy?: false | number | string[];
  /**
   * Allowances per caller address (default: `GENEROUS_ADDRESS_LIMITS`, since every test calls
   * from 127.0.0.1; the tests of the limits pass the production ones or smaller).
   */
  addressLimits?: Partial<Record<LimitedAction, Allowance>>;
  /** Password hashes at once and waiting (default: the production bound). */
  passwordHashLimits?: { concurrency: number; queue: number };
  /** The codec server at `/codec` (default: the tests' key, token and UI origin). */
  codecServer?: CodecServerDeps;
}

/** Every test of a file signs up and in from one address: allowances no file reaches. */
export const GENEROUS_ADDRESS_LIMITS: Record<LimitedAction, Allowance> = Object.fromEntries(
  Object.keys(ADDRESS_LIMITS).map((action) => [action, { limit: 1_000_000, windowSeconds: 60 }]),
) as Record<LimitedAction, Allowance>;

/**
 * The production code paths with a cheaper scrypt cost (2^12 instead of 2^17), so that the
 * hundreds of sign-ups in the suite do not dominate its run time.
 */
export const TEST_AUTH_CONFIG = {
  secret: 'test-secret-that-is-at-least-32-characters-long',
  sessionTtlSeconds: 3600,
  passwordHashLogN: 12,
};

/** The real app on a free port, with real workers when asked; close() stops both. */
export async function startApi(options: StartApiOptions = {}): Promise<RunningApi> {
  // Also for the benchmarks and scripts that start the API without the mocha root hook.
  useTestDataKeys();
  const env = createLocal();
  // Listening first: the app's public address (where the provider posts call statuses) is its own port.
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const publicApiUrl = `${baseUrl}/api/v1`;
  const providers = options.providers ? createProviders(options.providers) : null;
  // The media service (audio streams, the browser call page + the conversation worker), when
  // the test runs calls end to end; first, so that the app knows its public address.
  const media =
    options.media && providers
      ? await startMediaService({
          host: '127.0.0.1',
          port: 0,
          secret: TEST_AUTH_CONFIG.secret,
          connection: options.workerConnection ?? env.nativeConnection,
          namespace: options.namespace ?? env.namespace ?? 'default',
          temporal: options.temporal ?? env.client,
          providers,
          toolsAllowPrivateNetworks: true,
          embeddings: options.embeddings ?? null,
          // The stack's API is in this process and forgets the node as it leaves.
          directoryLeaveWaitMs: 0,
        })
      : null;
  const app = createApp({
    config: {
      defaultTimezone: 'Asia/Kolkata',
      validateResponses: true,
      roundTripWaitMs: options.roundTripWaitMs ?? 30_000,
      auth: { ...TEST_AUTH_CONFIG, passwordHashConcurrency: options.passwordHashLimits?.concurrency, passwordHashQueue: options.passwordHashLimits?.queue },
      welcomeCreditsPaise: 50_000,
      providers: options.providers,
      publicApiUrl,
      mediaPublicUrl: media?.publicUrl,
      toolsAllowPrivateNetworks: options.toolsAllowPrivateNetworks ?? true,
      embeddings: options.embeddings ?? null,
      corsOrigins: options.corsOrigins,
      trustProxy: options.trustProxy,
      privacy: options.privacy,
    },
    now: options.now,
    paymentCheckDelaysSeconds: options.paymentCheckDelaysSeconds,
    addressLimits: options.addressLimits ?? GENEROUS_ADDRESS_LIMITS,
    temporal: options.temporal ?? env.client,
    codecServer: options.codecServer ?? testCodecServer(),
    extraRoutes: options.extraRoutes,
    logger: options.logger ?? quietLogger,
  });
  server.on('request', app);

  let workers: Worker[] = [];
  let running: Promise<unknown> = Promise.resolve();
  if (options.workers?.length) {
    workers = await createWorkers({
      connection: options.workerConnection ?? env.nativeConnection,
      namespace: options.namespace ?? env.namespace ?? 'default',
      roles: options.workers,
      // Receivers in tests listen on 127.0.0.1.
      deps: {
        clock: systemClock,
        temporal: options.temporal ?? env.client,
        webhooksAllowPrivateNetworks: true,
        ...(providers
          ? {
              telephony: providers.telephony,
              telephonyCallbackBaseUrl: publicApiUrl,
              languageModelFor: (provider) => providers.languageModelFor(provider),
              synthesizer: providers.synthesizer,
            }
          : {}),
        ...(options.dialsPerSecond ? { dialsPerSecond: options.dialsPerSecond } : {}),
        ...(options.privacy ? { kycDocumentRetentionSeconds: options.privacy.kycDocumentRetentionSeconds } : {}),
        ...(options.providers?.payments
          ? { paymentGateway: createPaymentGateway(options.providers.payments, options.providers.timeoutMs), seller: sellerOf(undefined) }
          : {}),
      },
      workflows: { workflowBundle: await workflowBundle() },
    });
    running = Promise.all(workers.map((w) => w.run()));
  }

  return {
    baseUrl,
    request: (path, init) => fetch(baseUrl + path, init),
    media,
    async close() {
      await media?.close();
      workers.forEach((w) => w.shutdown());
      await running;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Tests read outcomes from responses; access lines would only bury the report. */
const quietLogger: Logger = { info: () => undefined, error: () => undefined };

export function jsonBody(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
