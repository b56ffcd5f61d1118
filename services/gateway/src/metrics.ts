import {
  buildMetricsApp as buildRegistryMetricsApp,
  createMetricsRegistry,
  type Logger,
  METRICS_PATH,
  serveMetrics,
} from '@lead-capture/kit';
import type { FastifyInstance } from 'fastify';
import { Counter, type Registry } from 'prom-client';

export { METRICS_PATH };

export interface GatewayMetrics {
  registry: Registry;
  /** Requests answered, by method, route pattern (never the raw URL) and status. */
  httpRequests: Counter<'method' | 'route' | 'status'>;
  /** The rate-limit store failed or timed out and the request was let through. */
  rateLimitStoreErrors: Counter<'store'>;
  /** Requests refused with 429, by budget. */
  rateLimited: Counter<'bucket'>;
}

/** One registry per gateway app (tests build several in one process). */
export function createGatewayMetrics(): GatewayMetrics {
  const registry = createMetricsRegistry();
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered by the gateway',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    rateLimitStoreErrors: new Counter({
      name: 'rate_limit_store_errors_total',
      help: 'Rate-limit store failures or timeouts; each request concerned was let through (fail open)',
      labelNames: ['store'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'rate_limited_requests_total',
      help: 'Requests refused with 429',
      labelNames: ['bucket'],
      registers: [registry],
    }),
  };
}

export interface MetricsAccess {
  /** METRICS_TOKEN: when set, GET /metrics requires `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * Whether the API app serves /metrics: only with a token, and never when METRICS_PORT is set
   * (then only the metrics app does). Otherwise /metrics is a 404 like any unknown path.
   */
  servedByApi: boolean;
}

/**
 * Counts every response and, when `access.servedByApi`, serves GET /metrics (Prometheus text
 * format) behind the metrics token.
 */
export function registerMetrics(app: FastifyInstance, metrics: GatewayMetrics, access: MetricsAccess): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequests.inc({
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    });
  });
  if (access.servedByApi) serveMetrics(app, metrics.registry, access.token);
}

/**
 * The app of METRICS_PORT, not listening: GET /metrics (behind METRICS_TOKEN when set) and nothing
 * else. The process that builds the gateway with `metrics` listens on it.
 */
export function buildMetricsApp(options: {
  metrics: GatewayMetrics;
  token?: string;
  logger: Logger;
}): FastifyInstance {
  return buildRegistryMetricsApp({
    registry: options.metrics.registry,
    token: options.token,
    logger: options.logger,
  });
}
