import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { reportAuditRecords } from './audit.js';
import { registerHealthRoutes } from './health.js';
import { createHttpApp } from './http.js';
import { internalIdentity } from './internal-identity.js';
import type { InternalTrust } from './internal-keys.js';
import { METRICS_PATH, serveMetrics } from './metrics.js';
import { registerOpenApi, SERVICE_OPENAPI_PATH, serveOpenApiDocument } from './openapi.js';
import type { ServiceDeps, ServiceModule } from './service.js';
import { type TrustProxySetting, toFastifyTrustProxy } from './trust-proxy.js';

export interface ServiceAppOptions {
  /** Whose signed identities reach non-public routes, and for what (createInternalTrust). */
  trust: InternalTrust;
  bodyLimit?: number;
  /** REQUEST_BODY_TIMEOUT_MS (createHttpApp's default when unset). */
  bodyTimeoutMs?: number;
  trustProxy?: TrustProxySetting;
  /** Readiness turns 503 once shutdown started. */
  isShuttingDown?: () => boolean;
  /**
   * Serves GET /metrics from this registry on the service's own port, behind `token` when given
   * (no internal identity needed: Prometheus scrapes it).
   */
  metrics?: { registry: Registry; token?: string };
}

/**
 * The HTTP app of one service process, not listening: its OpenAPI document at /openapi.json,
 * /healthz and /readyz (store and bus), the internal-identity check (the module's public routes
 * and the document excepted), then the module's routes, whose audited writes
 * answer with their audit record for the gateway. Tests build it without listening.
 */
export async function buildServiceApp(
  module: ServiceModule,
  deps: Pick<ServiceDeps, 'logger' | 'store' | 'bus'>,
  options: ServiceAppOptions,
): Promise<FastifyInstance> {
  const isPublicRoute = (method: string, path: string) => module.isPublicRoute?.(method, path) ?? false;
  const app = createHttpApp({
    logger: deps.logger,
    bodyLimit: options.bodyLimit,
    ...(options.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: options.bodyTimeoutMs }),
    trustProxy: options.trustProxy === undefined ? false : toFastifyTrustProxy(options.trustProxy),
  });
  await registerOpenApi(app, { title: `Lead Capture: ${module.name} service`, isPublicRoute });
  serveOpenApiDocument(app, SERVICE_OPENAPI_PATH);
  registerHealthRoutes(app, {
    checks: { store: () => deps.store.ping(), bus: () => deps.bus.ping() },
    isShuttingDown: options.isShuttingDown,
  });
  await app.register(internalIdentity, {
    trust: options.trust,
    service: module.name,
    publicRoutes: (method, path) =>
      path === SERVICE_OPENAPI_PATH ||
      (options.metrics !== undefined && path === METRICS_PATH) ||
      isPublicRoute(method, path),
  });
  if (options.metrics) serveMetrics(app, options.metrics.registry, options.metrics.token);
  reportAuditRecords(app);
  const { registerRoutes } = module;
  if (registerRoutes) await app.register(async (scope) => registerRoutes.call(module, scope));
  return app;
}
