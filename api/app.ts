import express, { type Express } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { cacheValidatorRouteMatchers } from './route-matchers-cache';
import type { Client } from '@temporalio/client';
import type { Config } from '../config/env';
import { jsonLogger, type Logger } from '../domain/shared/logger';
import { accessLog } from './middleware/access-log';
import { errorHandler, notFound } from './middleware/errors';
import { requestId } from './middleware/request-id';
import { renderDatesInZone, timezone } from './middleware/timezone';
import { openApiDocument, servedOpenApiDocument } from './openapi-document';
import { healthRoutes } from './routes/health';
import { authRoutes } from './routes/auth';
import { agentRoutes } from './routes/agents';
import { knowledgeBaseRoutes } from './routes/knowledge-bases';
import { toolTestRoutes } from './routes/tool-tests';
import { catalogRoutes } from './routes/catalog';
import { phoneNumberRoutes } from './routes/phone-numbers';
import { createProviders } from '../providers';
import { keyRoutes } from './routes/keys';
import { webhookRoutes } from './routes/webhooks';
import { webhookDeliveryRoutes } from './routes/webhook-deliveries';
import { callRoutes } from './routes/calls';
import { batchRoutes } from './routes/batches';
import { doNotCallRoutes } from './routes/do-not-call';
import { privacyRoutes } from './routes/privacy';
import { DEFAULT_PRIVACY_PERIODS } from '../contracts/privacy';
import { browserCallRoutes } from './routes/browser-calls';
import { telephonyCallbackRoutes } from './routes/telephony-callbacks';
import { giveBackRefusedCallbackClaims, refuseReplayedTelephonyCallbacks } from './middleware/telephony-callback-replay';
import { kycRoutes } from './routes/kyc';
import { FILE_UPLOADER_OPTIONS, UPLOAD_MAX_BYTES, withMultipartErrorsAsBadRequest } from './uploads';
import { accountRoutes } from './routes/account';
import { inviteRoutes } from './routes/invites';
import { workspaceRoutes } from './routes/workspace';
import { workspaceLimitRoutes } from './routes/workspace-limits';
import { observabilityRoutes } from './routes/observability';
import { requestTelemetry } from './middleware/request-telemetry';
import { billingRoutes } from './routes/billing';
import { sellerOf } from '../domain/billing/invoices';
import { paymentWebhookRoutes, RAZORPAY_WEBHOOK_PATH, rawJsonForWebhooks } from './routes/payment-webhooks';
import { createPaymentGateway } from '../providers/payments/gateway';
import { access, isOperationPath, servesIdentifiedOnly } from './middleware/access';
import { securityHeaders } from './middleware/security-headers';
import { apiCors } from './middleware/cors';
import { apiRouter, ROUTING_OPTIONS } from './routes/router';
import { OperationIndex } from './operation-index';
import { SessionTokens } from './auth/session-tokens';
import { ADDRESS_LIMITS, AddressLimiter, limitOperationsByAddress, type Allowance, type LimitedAction } from './auth/address-limits';
import { DEFAULT_PASSWORD_HASH_LIMITS, limitPasswordHashing } from './auth/passwords';
import { WORKSPACE_CACHE_MS, WorkspaceCache } from './auth/workspace-cache';
import type { AuthDeps } from './auth/deps';
import { mcpRoutes } from './mcp/routes';
import { oauthRoutes } from './routes/oauth';
import { connectedAppRoutes } from './routes/connected-apps';
import { codecServerRoutes, type CodecServerDeps } from './codec-server';

export interface AppDeps {
  config: Pick<Config, 'defaultTimezone' | 'validateResponses' | 'roundTripWaitMs' | 'auth' | 'welcomeCreditsPaise' | 'toolsAllowPrivateNetworks'> &
    /** Trusted proxies and CORS origins (default: none of either). */
    Partial<Pick<Config, 'trustProxy' | 'corsOrigins'>> &
    /**
     * The outside services (none configured: their endpoints answer 502), and the API's public
     * base, which the telephony provider's signed callbacks are checked against (without
     * either, every callback is 403). The media service's public address, where browser
     * calls are sent when their media node has not registered itself in time.
     */
    Partial<Pick<Config, 'providers' | 'publicApiUrl' | 'mediaPublicUrl' | 'billing' | 'embeddings'>> &
    /** The callers' data periods (default: the stated ones; tests shorten them). */
    Partial<Pick<Config, 'privacy'>>;
  temporal: Client;
  logger?: Logger;
  /** The time as the API sees it (tests of time windows pass their own). */
  now?: () => Date;
  /**
   * How long keyed requests may reuse a workspace this process read (default
   * `WORKSPACE_CACHE_MS`, 1 s; 0 reads it on every request): decision 0151.
   */
  workspaceCacheMs?: number;
  /** The payment gateway's order checks' schedule in seconds (tests shorten it; docs/decisions/0186). */
  paymentCheckDelaysSeconds?: number[];
  /** Allowances per caller address, over the defaults (`ADDRESS_LIMITS`); tests of other things raise them. */
  addressLimits?: Partial<Record<LimitedAction, Allowance>>;
  /**
   * The codec server of the Temporal Web UI and CLI at `/codec` (docs/decisions/0201); absent:
   * not served.
   */
  codecServer?: CodecServerDeps;
  /** Mounted after the API routes (outside /api), before the 404 handler. Tests use it. */
  extraRoutes?: (app: Express) => void;
}

/** The public API under /api/v1 and its console alias /api: the same routes, mounted twice. */
export const API_BASE_PATHS = ['/api/v1', '/api'] as const;

/** Builds the Express app without listening, so tests and the server share it. */
export function createApp(deps: AppDeps): Express {
  const logger = deps.logger ?? jsonLogger();
  const app = express();
  // Before the first route: the app's own router is built with these (decision 0170).
  app.set('case sensitive routing', ROUTING_OPTIONS.caseSensitive);
  app.set('strict routing', ROUTING_OPTIONS.strict);
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  // req.ip and req.secure read X-Forwarded-For and X-Forwarded-Proto only from these proxies.
  app.set('trust proxy', deps.config.trustProxy ?? false);

  const document = openApiDocument();
  const operations = new OperationIndex(document);
  app.use(requestId());
  // Latency by operation and the request's span (docs/observability.md): first, so that it times everything after.
  app.use(requestTelemetry());
  app.use(securityHeaders());
  app.use('/api', apiCors({ origins: deps.config.corsOrigins ?? [], isOperationPath: (path) => isOperationPath(operations, API_BASE_PATHS, path) }));
  app.use(accessLog(logger));
  app.use(timezone(deps.config.defaultTimezone));

  const served = servedOpenApiDocument();
  for (const base of ['', ...API_BASE_PATHS]) {
    app.get(`${base}/openapi.json`, (_req, res) => {
      res.json(served);
    });
  }

  // Outside /api and before the API's body parser: it has its own credential and body limit.
  if (deps.codecServer) app.use(codecServerRoutes(deps.codecServer));

  const now = deps.now ?? (() => new Date());
  const auth: AuthDeps = {
    config: deps.config.auth,
    tokens: new SessionTokens(deps.config.auth.secret),
    welcomeCreditsPaise: deps.config.welcomeCreditsPaise,
    now,
    workspaces: new WorkspaceCache(deps.workspaceCacheMs ?? WORKSPACE_CACHE_MS),
    addressLimiter: new AddressLimiter({ ...ADDRESS_LIMITS, ...deps.addressLimits }, now),
  };
  limitPasswordHashing({
    concurrency: deps.config.auth.passwordHashConcurrency ?? DEFAULT_PASSWORD_HASH_LIMITS.concurrency,
    queue: deps.config.auth.passwordHashQueue ?? DEFAULT_PASSWORD_HASH_LIMITS.queue,
  });
  // Access is decided before the validator reads the body: a caller without access learns
  // nothing about the body's rules, and uploads are not parsed for nobody. It sees every
  // request, so that any spelling of an API path is its to identify or refuse (decision
  // 0170); the document routes above are the only API paths served without it.
  app.use(access(operations, API_BASE_PATHS, auth));
  // Sign-up, sign-in and invite acceptance by the caller's address, before any body is read.
  app.use(limitOperationsByAddress(auth.addressLimiter));
  const providers = createProviders(deps.config.providers);
  // The MCP server for connected apps (api/mcp), outside the OpenAPI document: it checks credentials itself, then reads its own body.
  app.use(mcpRoutes({ ...auth, temporal: deps.temporal, logger, publicApiUrl: deps.config.publicApiUrl, synthesizer: providers.synthesizer }));
  // The payment gateway signs its webhooks' raw bytes: their parser keeps them (docs/decisions/0185).
  app.use(
    API_BASE_PATHS.map((base) => `${base}${RAZORPAY_WEBHOOK_PATH}`),
    rawJsonForWebhooks(),
  );
  app.use(express.json({ limit: '1mb' }));
  // The telephony provider posts form-encoded callbacks. Flat fields only (`extended: false`):
  // a repeated field becomes a list, which the operation's schema refuses.
  app.use(
    API_BASE_PATHS.map((base) => `${base}/telephony`),
    express.urlencoded({ extended: false, limit: '64kb' }),
  );
  // A do-not-call list may be imported as a text/csv body as well as a multipart upload.
  app.use(
    API_BASE_PATHS.map((base) => `${base}/do-not-call/import`),
    express.text({ type: 'text/csv', limit: UPLOAD_MAX_BYTES }),
  );
  // The validator would compile every documented route on every request to find its operation.
  cacheValidatorRouteMatchers();
  app.use(
    OpenApiValidator.middleware({
      apiSpec: structuredClone(document) as never,
      validateRequests: { allErrors: true },
      validateResponses: deps.config.validateResponses,
      validateFormats: true,
      validateSecurity: false, // the access middleware above enforces every x-access rule
      fileUploader: FILE_UPLOADER_OPTIONS, // multipart bodies are parsed in memory, capped (413 beyond)
    }).map(withMultipartErrorsAsBadRequest),
  );
  app.use(renderDatesInZone());

  const api = apiRouter();
  api.use(servesIdentifiedOnly());
  api.use(healthRoutes({ temporal: deps.temporal, roundTripWaitMs: deps.config.roundTripWaitMs }));
  api.use(authRoutes(auth));
  api.use(catalogRoutes(providers));
  api.use(phoneNumberRoutes(providers));
  api.use(agentRoutes({ ...auth, temporal: deps.temporal, synthesizer: providers.synthesizer }));
  api.use(knowledgeBaseRoutes({ now, embeddings: deps.config.embeddings ?? null }));
  api.use(toolTestRoutes({ allowPrivateNetworks: deps.config.toolsAllowPrivateNetworks }));
  api.use(keyRoutes(auth));
  api.use(webhookRoutes({ temporal: deps.temporal, now }));
  api.use(webhookDeliveryRoutes({ temporal: deps.temporal, now }));
  api.use(callRoutes({ temporal: deps.temporal, now }));
  api.use(batchRoutes({ temporal: deps.temporal, now }));
  api.use(doNotCallRoutes({ now }));
  api.use(
    privacyRoutes({
      temporal: deps.temporal,
      now,
      closureGraceSeconds: deps.config.privacy?.workspaceClosureGraceSeconds ?? DEFAULT_PRIVACY_PERIODS.workspaceClosureGraceSeconds,
    }),
  );
  api.use(browserCallRoutes({ temporal: deps.temporal, now, streamTokenSecret: deps.config.auth.secret, mediaPublicUrl: deps.config.mediaPublicUrl }));
  // A signed callback is taken once (docs/decisions/0177): a replay is refused before its route runs.
  api.use(refuseReplayedTelephonyCallbacks({ now, logger, authToken: deps.config.providers?.telephony?.authToken, publicApiUrl: deps.config.publicApiUrl }));
  api.use(
    telephonyCallbackRoutes({
      temporal: deps.temporal,
      now,
      logger,
      authToken: deps.config.providers?.telephony?.authToken,
      publicApiUrl: deps.config.publicApiUrl,
      streamTokenSecret: deps.config.auth.secret,
    }),
  );
  api.use(giveBackRefusedCallbackClaims(logger));
  api.use(kycRoutes({ temporal: deps.temporal, now }));
  api.use(accountRoutes(auth));
  api.use(workspaceRoutes(auth));
  api.use(workspaceLimitRoutes({ now }));
  api.use(observabilityRoutes({ now }));
  const seller = sellerOf(deps.config.billing);
  api.use(
    billingRoutes({
      now,
      gateway: createPaymentGateway(deps.config.providers?.payments, deps.config.providers?.timeoutMs),
      seller,
      temporal: deps.temporal,
      paymentCheckDelaysSeconds: deps.paymentCheckDelaysSeconds,
    }),
  );
  api.use(paymentWebhookRoutes({ now, seller, temporal: deps.temporal, logger, webhookSecret: deps.config.providers?.payments?.webhookSecret }));
  api.use(inviteRoutes(auth));
  api.use(connectedAppRoutes({ now }));
  for (const base of API_BASE_PATHS) app.use(base, api);
  // OAuth for connected apps (MCP clients) at the origin root, where RFC 8414 and RFC 9728 put it.
  app.use(oauthRoutes({ ...auth, publicApiUrl: deps.config.publicApiUrl }));

  deps.extraRoutes?.(app);
  app.use(notFound());
  app.use(errorHandler(logger));
  return app;
}
