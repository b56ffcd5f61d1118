import type { FastifyInstance } from 'fastify';

/** A readiness check: resolves when the dependency answers (store ping, bus channel, Redis PING). */
export type HealthCheck = () => Promise<void>;

export interface HealthOptions {
  /** Named checks, run in parallel on every GET /readyz. */
  checks: Record<string, HealthCheck>;
  /** Time each check gets before it counts as failed. Default 1000 ms. */
  timeoutMs?: number;
  /** True once shutdown has started: /readyz answers 503 so load balancers stop sending traffic. */
  isShuttingDown?: () => boolean;
}

/** Probe paths: public (no identity), and createHttpApp does not log each call to them. */
export const HEALTH_PATHS: readonly string[] = ['/healthz', '/readyz'];

/**
 * GET /healthz: 200 `{ status: 'ok' }` while the process lives (liveness).
 * GET /readyz: 200 `{ status: 'ready' }` when every check answers in time, else
 * 503 `{ error: 'Not ready: store, bus' }` naming the failing checks (the reasons are logged).
 */
export function registerHealthRoutes(app: FastifyInstance, options: HealthOptions): void {
  const { checks, timeoutMs = 1000, isShuttingDown = () => false } = options;

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    if (isShuttingDown()) return reply.code(503).send({ error: 'Not ready: shutting down' });
    const names = Object.keys(checks);
    const results = await Promise.allSettled(names.map((name) => withTimeout(checks[name]!, timeoutMs)));
    const failed = names.filter((name, i) => {
      const result = results[i]!;
      if (result.status === 'fulfilled') return false;
      request.log.warn({ check: name, err: result.reason }, 'Readiness check failed');
      return true;
    });
    if (failed.length > 0) return reply.code(503).send({ error: `Not ready: ${failed.join(', ')}` });
    return { status: 'ready' };
  });
}

async function withTimeout(check: HealthCheck, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`No answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(check), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
