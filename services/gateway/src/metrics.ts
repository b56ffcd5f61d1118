import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';

export const METRICS_PATH = '/metrics';

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
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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

/** Counts every response and serves GET /metrics in the Prometheus text format. */
export function registerMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequests.inc({
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    });
  });
  app.get(METRICS_PATH, { schema: { hide: true } }, async (_request, reply) => {
    void reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
