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

function appWith(checks: Record<string, HealthCheck>, isShuttingDown?: () => boolean) {
  app = createHttpApp({ logger });
  registerHealthRoutes(app, { checks, timeoutMs: 100, isShuttingDown });
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
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
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
