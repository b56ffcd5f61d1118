import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { type HealthCheck, registerHealthRoutes } from './health.js';
import { createHttpApp } from './http.js';
import { createLogger } from './logger.js';

const logger = createLogger({ level: 'silent', name: 'test' });
let app: FastifyInstance;

afterEach(async () => {
  await app.close();
});

/** The probes' clock: a test moves it past the readiness cache. */
let clock = 0;
const advance = (ms: number) => {
  clock += ms;
};

function appWith(checks: Record<string, HealthCheck>, isShuttingDown?: () => boolean) {
  app = createHttpApp({ logger });
  registerHealthRoutes(app, { checks, timeoutMs: 100, isShuttingDown, now: () => clock });
  return app;
}

const ok: HealthCheck = async () => {};
const refused: HealthCheck = async () => {
  throw new Error('ECONNREFUSED');
};
const hangs: HealthCheck = () => new Promise(() => {});

describe('GET /healthz', () => {
  it('is 200 while the process lives, whatever the dependencies', async () => {
    const response = await appWith({ store: refused }).inject({ url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });
});

describe('GET /readyz', () => {
  it('is 200 when every check answers', async () => {
    const response = await appWith({ store: ok, bus: ok }).inject({ url: '/readyz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ready' });
  });

  it('is 503 naming the checks that fail or do not answer in time', async () => {
    const started = Date.now();
    const response = await appWith({ store: refused, bus: hangs, redis: ok }).inject({ url: '/readyz' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ error: 'Not ready: store, bus' });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('turns from 503 to 200 once the dependency answers', async () => {
    let storeUp = false;
    appWith({
      store: async () => {
        if (!storeUp) throw new Error('not yet');
      },
    });
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503);
    storeUp = true;
    advance(1000);
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });

  it('runs its checks at most once a second, however many probes come (security review, finding 10)', async () => {
    let pings = 0;
    let storeUp = true;
    appWith({
      store: async () => {
        pings++;
        if (!storeUp) throw new Error('down');
      },
    });
    const burst = await Promise.all(Array.from({ length: 20 }, () => app.inject({ url: '/readyz' })));
    expect(burst.map((response) => response.statusCode)).toEqual(Array(20).fill(200));
    for (let i = 0; i < 10; i++) expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    expect(pings).toBe(1);

    storeUp = false;
    advance(999);
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    expect(pings).toBe(1);
    advance(1);
    expect((await app.inject({ url: '/readyz' })).json()).toEqual({ error: 'Not ready: store' });
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503);
    expect(pings).toBe(2);
  });

  it('counts a check that throws synchronously as failed', async () => {
    const throwsAtOnce = (() => {
      throw new Error('no client');
    }) as HealthCheck;
    const response = await appWith({ store: throwsAtOnce }).inject({ url: '/readyz' });
    expect(response.json()).toEqual({ error: 'Not ready: store' });
  });

  it('is 503 once shutdown has started, so load balancers drain the instance', async () => {
    let shuttingDown = false;
    appWith({ store: ok }, () => shuttingDown);
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
    shuttingDown = true;
    const response = await app.inject({ url: '/readyz' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ error: 'Not ready: shutting down' });
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('is 200 for a process with nothing to check', async () => {
    expect((await appWith({}).inject({ url: '/readyz' })).statusCode).toBe(200);
  });
});
