import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

/** A readiness check: resolves when the dependency answers (store ping, bus channel, Redis PING). */
export type HealthCheck = () => Promise<void>;

export interface HealthOptions {
  /** Named checks, run in parallel on every GET /readyz. */
  checks: Record<string, HealthCheck>;
  /** Time each check gets before it counts as failed. Default 1000 ms. */
  timeoutMs?: number;
  /** True once shutdown has started: /readyz answers 503 so load balancers stop sending traffic. */
  isShuttingDown?: () => boolean;
  /**
   * How long one round of checks answers every /readyz (pass or fail). Default 1000 ms: a public
   * probe must not become a way to hammer the store and the bus. Concurrent calls share one round.
   */
  cacheMs?: number;
  /** Current time in ms (tests move it). */
  now?: () => number;
}

interface Readiness {
  /** The checks that failed, empty when ready. */
  failed: string[];
  at: number;
}

/** Probe paths: public (no identity), and createHttpApp does not log each call to them. */
export const HEALTH_PATHS: readonly string[] = ['/healthz', '/readyz'];

/**
 * GET /healthz: 200 `{ status: 'ok' }` while the process lives (liveness).
 * GET /readyz: 200 `{ status: 'ready' }` when every check answers in time, else
 * 503 `{ error: 'Not ready: store, bus' }` naming the failing checks (the reasons are logged).
 * One round of checks answers for `cacheMs` (shutdown is seen at once).
 */
export function registerHealthRoutes(app: FastifyInstance, options: HealthOptions): void {
  const { checks, timeoutMs = 1000, isShuttingDown = () => false, cacheMs = 1000, now = Date.now } = options;
  let latest: Readiness | undefined;
  let running: Promise<Readiness> | undefined;

  async function runChecks(log: FastifyBaseLogger): Promise<Readiness> {
    const names = Object.keys(checks);
    const results = await Promise.allSettled(names.map((name) => withTimeout(checks[name]!, timeoutMs)));
    const failed = names.filter((name, i) => {
      const result = results[i]!;
      if (result.status === 'fulfilled') return false;
      log.warn({ check: name, err: result.reason }, 'Readiness check failed');
      return true;
    });
    return { failed, at: now() };
  }

  function readiness(log: FastifyBaseLogger): Promise<Readiness> {
    if (latest && now() - latest.at < cacheMs) return Promise.resolve(latest);
    running ??= runChecks(log).then(
      (result) => {
        latest = result;
        running = undefined;
        return result;
      },
      (error: unknown) => {
        running = undefined;
        throw error;
      },
    );
    return running;
  }

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    if (isShuttingDown()) return reply.code(503).send({ error: 'Not ready: shutting down' });
    const { failed } = await readiness(request.log);
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
