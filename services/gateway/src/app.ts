import swaggerUi from '@fastify/swagger-ui';
import type { MessageBus } from '@lead-capture/bus';
import { DASHBOARD_DIST_DIR } from '@lead-capture/dashboard';
import type { DocStore } from '@lead-capture/docstore';
import {
  collectWriteRoutes,
  createHttpApp,
  type DeclaredRoute,
  type InternalSigner,
  type InternalTrust,
  type Logger,
  Outbox,
  registerHealthRoutes,
  registerOpenApi,
  type ServiceModule,
  type ServiceUrls,
  toFastifyTrustProxy,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { registerAuditTrail } from './audit/index.js';
import type { GatewayConfig } from './config.js';
import { isDashboardPath, registerDashboard } from './dashboard.js';
import { createAccessTokens } from './identity/access-tokens.js';
import { ApiKeys } from './identity/api-keys.js';
import { createAuthenticator } from './identity/authenticate.js';
import { ensureFirstAdmin, type FirstAdminOptions } from './identity/first-admin.js';
import { HashingQueue } from './identity/hashing-queue.js';
import { passwordAttempts } from './identity/password-attempts.js';
import { unmatchableHash, verifyPassword } from './identity/passwords.js';
import { createRefreshTokens } from './identity/refresh-tokens.js';
import { GATEWAY_OUTBOX, UserDirectory } from './identity/users.js';
import { createGatewayMetrics, type GatewayMetrics, METRICS_PATH, registerMetrics } from './metrics.js';
import { createRateLimiter } from './rate-limit/limiter.js';
import { createMemoryRateLimitStore } from './rate-limit/memory-store.js';
import type { RateLimitStore } from './rate-limit/store.js';
import { deadLetterRoutes } from './routes/admin/dead-letters.js';
import { apiKeyRoutes } from './routes/api-keys/index.js';
import { authRoutes } from './routes/auth/index.js';
import { userRoutes } from './routes/users/index.js';
import { registerGuard } from './routing/guard.js';
import { DOCS_PREFIX, OPENAPI_PATH, registerOpenApiDocument } from './routing/openapi-document.js';
import { assertModulesMatchTable, isPublicUpstreamRoute, ROUTING_TABLE } from './routing/table.js';
import { registerUpstreams } from './routing/upstreams.js';
import { DOCS_CONTENT_SECURITY_POLICY, registerSecurityHeaders } from './security-headers.js';
import { createLiveStream } from './stream/index.js';

/** The gateway's settings: GATEWAY_CONFIG with its secrets resolved, and the body limit. */
export type GatewaySettings = Omit<
  GatewayConfig,
  'JWT_SECRET' | 'ADMIN_EMAIL' | 'ADMIN_PASSWORD' | 'ADMIN_NAME'
> & {
  JWT_SECRET: string;
  BODY_LIMIT_BYTES: number;
  /** createHttpApp's default (10 min) when unset. */
  REQUEST_BODY_TIMEOUT_MS?: number;
};

export interface GatewayDeps {
  logger: Logger;
  store: DocStore;
  bus: MessageBus;
  config: GatewaySettings;
  /** Created when the app becomes ready (listen, or ready()) and no user exists yet. */
  firstAdmin: FirstAdminOptions;
  /**
   * Where rate-limit counters live (per-IP and per-account sign-in limits); in this process's memory
   * when absent. Closed by its owner.
   */
  rateLimitStore?: RateLimitStore;
  /**
   * The gateway's metrics, when its process also serves them on METRICS_PORT (buildMetricsApp);
   * created here otherwise.
   */
  metrics?: GatewayMetrics;
  /** How a sign-in's password is checked (tests hold one open). Default: scrypt, verifyPassword. */
  verifyPassword?: (password: string, hash: string) => Promise<boolean>;
  /** Embedded mode: the service modules served inside the gateway's app. */
  services?: readonly ServiceModule[];
  /** Distributed mode: each service's base URL; requests are forwarded there. */
  upstreams?: ServiceUrls;
  /** Distributed mode: the gateway's own key, which signs the identity forwarded with each request. */
  signer?: InternalSigner;
  /** Embedded mode: whose signed identities reach the services' `/internal/` routes (their callers'). */
  trust?: InternalTrust;
  /** Readiness turns 503 once shutdown has started. */
  isShuttingDown?: () => boolean;
  /** Current time in ms (tests move it). */
  now?: () => number;
  /** The dashboard's build served at `/`. Default: packages/dashboard/dist. */
  dashboardDir?: string;
  /** Filled with every write route the app serves, and its audit metadata (tests hold them to it). */
  writeRoutes?: DeclaredRoute[];
}

/**
 * The public entry, not listening: authentication (users, access and refresh tokens, API keys),
 * per-IP rate limits, the routing of every public prefix to its service (mounted in this app, or
 * forwarded over HTTP), health, metrics and the OpenAPI description with its docs page.
 * Creates the gateway's indexes; when the app becomes ready and no user exists, the first admin.
 */
export async function buildGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const { logger, store, bus, config, services, upstreams, now = Date.now } = deps;
  if (services && upstreams) throw new Error('buildGateway takes services (embedded) or upstreams, not both');
  if (upstreams && !deps.signer) throw new Error('The distributed gateway needs its signing key');
  const modules = services ?? [];
  assertModulesMatchTable(modules);

  const accessTokens = createAccessTokens({
    secret: config.JWT_SECRET,
    ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
    now,
  });
  const refreshTokens = createRefreshTokens({ store, ttlDays: config.REFRESH_TOKEN_TTL_DAYS, now });
  const outbox = new Outbox({ store, bus, logger, collection: GATEWAY_OUTBOX });
  const users = new UserDirectory({ store, outbox, refreshTokens, now });
  const apiKeys = new ApiKeys({ store, logger, now });
  await Promise.all([
    users.ensureIndexes(),
    refreshTokens.ensureIndexes(),
    apiKeys.ensureIndexes(),
    outbox.createIndexes(),
  ]);

  const isPublicServiceRoute = upstreams
    ? isPublicUpstreamRoute
    : (method: string, path: string) =>
        modules.some((module) => module.isPublicRoute?.(method, path) ?? false);

  const app = createHttpApp({
    logger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    ...(config.REQUEST_BODY_TIMEOUT_MS === undefined
      ? {}
      : { bodyTimeoutMs: config.REQUEST_BODY_TIMEOUT_MS }),
    trustProxy: toFastifyTrustProxy(config.TRUST_PROXY),
  });
  if (deps.writeRoutes) collectWriteRoutes(app, deps.writeRoutes);
  // First: every answer carries the browser-facing headers, refusals by the guard included.
  registerSecurityHeaders(app, { hsts: config.HSTS });
  // On ready (listen), after the hosting process started the services: their subscriptions to
  // user events exist by then.
  app.addHook('onReady', async () => {
    outbox.start();
    await ensureFirstAdmin(users, deps.firstAdmin, logger);
  });
  app.addHook('onClose', () => outbox.stop());

  await registerOpenApi(app, {
    title: 'Lead Capture API',
    description:
      'Webhooks in; clean, de-duplicated, enriched and scored leads out. Authenticate with an access token or an API key.',
    isPublicRoute: isPublicServiceRoute,
    hiddenPrefixes: [METRICS_PATH, OPENAPI_PATH, DOCS_PREFIX],
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiConfig: { urls: [{ url: OPENAPI_PATH, name: 'Lead Capture API' }] },
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
  });

  const metrics = deps.metrics ?? createGatewayMetrics();
  const rateLimitStore =
    deps.rateLimitStore ?? createMemoryRateLimitStore({ windowMs: config.RATE_LIMIT_WINDOW_MS, now });
  if (!deps.rateLimitStore) app.addHook('onClose', () => rateLimitStore.close());

  const liveStream = await createLiveStream({
    store,
    bus,
    logger,
    users,
    apiKeys,
    refreshTokens,
    config,
    registry: metrics.registry,
    now,
  });
  registerGuard(app, {
    authenticate: createAuthenticator({ accessTokens, apiKeys, users }),
    redeemTicket: liveStream.redeemTicket,
    limiter: createRateLimiter({
      store: rateLimitStore,
      windowMs: config.RATE_LIMIT_WINDOW_MS,
      limits: { api: config.RATE_LIMIT_MAX, webhook: config.WEBHOOK_RATE_LIMIT_MAX },
      logger,
      storeErrors: metrics.rateLimitStoreErrors,
      now,
    }),
    rateLimited: metrics.rateLimited,
    trust: deps.trust,
    isPublicServiceRoute,
    servesInternalRoutes: !upstreams,
    isDashboardPath,
  });
  registerMetrics(app, metrics, {
    token: config.METRICS_TOKEN,
    servedByApi: config.METRICS_TOKEN !== undefined && config.METRICS_PORT === undefined,
  });
  registerHealthRoutes(app, {
    checks: { store: () => store.ping(), bus: () => bus.ping() },
    isShuttingDown: deps.isShuttingDown,
    now,
  });
  registerOpenApiDocument(app, upstreams, { now });

  await registerAuditTrail(app, { store, logger, retentionDays: config.AUDIT_LOG_RETENTION_DAYS, now });
  const passwordChecks = passwordAttempts(
    createRateLimiter({
      store: rateLimitStore,
      windowMs: config.LOGIN_ATTEMPTS_WINDOW_MS,
      limits: {
        login: config.LOGIN_ATTEMPTS_PER_ACCOUNT,
        'login-address': config.LOGIN_ATTEMPTS_PER_ADDRESS,
      },
      logger,
      storeErrors: metrics.rateLimitStoreErrors,
      now,
    }),
  );
  const hashing = new HashingQueue({
    concurrency: config.LOGIN_HASH_CONCURRENCY,
    maxWaiting: config.LOGIN_HASH_QUEUE,
  });
  await app.register(authRoutes, {
    users,
    accessTokens,
    refreshTokens,
    unmatchableHash: unmatchableHash(),
    passwordChecks,
    hashing,
    verifyPassword: deps.verifyPassword ?? verifyPassword,
    onSessionEnded: liveStream.accessChanged.sessionEnded,
  });
  await app.register(userRoutes, {
    users,
    onUserChanged: liveStream.accessChanged.user,
    passwordChecks,
    hashing,
    verifyPassword: deps.verifyPassword ?? verifyPassword,
  });
  await app.register(apiKeyRoutes, { apiKeys, now, onApiKeyChanged: liveStream.accessChanged.apiKey });
  await app.register(deadLetterRoutes, { bus });
  await liveStream.register(app);
  await registerDashboard(app, { dir: deps.dashboardDir ?? DASHBOARD_DIST_DIR, logger });

  if (upstreams) {
    const missing = ROUTING_TABLE.filter((route) => upstreams[route.service] === undefined);
    if (missing.length > 0) {
      logger.warn(
        { services: [...new Set(missing.map((route) => route.service))] },
        'No URL for some services; their routes answer 503',
      );
    }
    await registerUpstreams(app, { upstreams, signer: deps.signer! });
  } else {
    for (const module of modules) {
      const { registerRoutes } = module;
      if (registerRoutes) await app.register(async (scope) => registerRoutes.call(module, scope));
    }
  }
  return app;
}
