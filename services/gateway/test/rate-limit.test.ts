import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createLogger } from '@lead-capture/kit';
import { isReachable, REDIS_URL, requireService, uniquePrefix, waitFor } from '@lead-capture/testing';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRedisRateLimitStore } from '../src/rate-limit/redis-store.js';
import type { RateLimitStore } from '../src/rate-limit/store.js';
import { createTestIntakeService } from './fixtures/test-services.js';
import { clockAtWindowStart, createTestGateway, freePort, type TestGateway } from './helpers.js';

const redisAvailable = await requireService('Redis', REDIS_URL);
const silent = createLogger({ level: 'silent', name: 'rate-limit-test' });

const cleanups: Array<() => Promise<unknown>> = [];
const METRICS_TOKEN = 'metrics-token-for-the-tests';
const scrapeMetrics = (gateway: TestGateway) =>
  gateway.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function gatewayWith(
  env: Record<string, string>,
  rateLimitStore?: RateLimitStore,
  now: () => number = clockAtWindowStart(),
): Promise<TestGateway> {
  const gateway = await createTestGateway({
    env: { METRICS_TOKEN, ...env },
    services: [createTestIntakeService()],
    rateLimitStore,
    now,
  });
  cleanups.push(() => gateway.close());
  return gateway;
}

/** An unauthenticated API request: refused with 401 after the limiter has counted it. */
const apiRequest = (gateway: TestGateway, headers: Record<string, string> = {}) =>
  gateway.app.inject({ method: 'GET', url: '/api/users', headers });

const webhookRequest = (gateway: TestGateway) =>
  gateway.app.inject({
    method: 'POST',
    url: '/api/webhooks/secret-token',
    payload: { email: 'a@example.com' },
  });

async function send(times: number, request: () => Promise<LightMyRequestResponse>) {
  const responses: LightMyRequestResponse[] = [];
  for (let i = 0; i < times; i += 1) responses.push(await request());
  return responses;
}

function expectRefused(response: LightMyRequestResponse, limit: number) {
  expect(response.statusCode).toBe(429);
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  // Sliding window: a budget spent across a window boundary frees up within two windows.
  expect(retryAfter).toBeLessThanOrEqual(120);
  expect(response.json()).toEqual({ error: `Too many requests; retry in ${retryAfter} seconds` });
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(response.headers['ratelimit-remaining']).toBe('0');
  expect(response.headers['ratelimit-reset']).toBe(String(retryAfter));
}

/** The 100 requests of the default budget pass with decreasing RateLimit-Remaining; the 101st is refused. */
async function expectDefaultBudget(gateway: TestGateway) {
  const allowed = await send(100, () => apiRequest(gateway));
  expect(allowed.map((response) => response.statusCode)).toEqual(Array(100).fill(401));
  expect(allowed[0]!.headers['ratelimit-limit']).toBe('100');
  expect(allowed[0]!.headers['ratelimit-remaining']).toBe('99');
  expect(allowed[99]!.headers['ratelimit-remaining']).toBe('0');
  expect(Number(allowed[0]!.headers['ratelimit-reset'])).toBeGreaterThan(0);
  expectRefused(await apiRequest(gateway), 100);
}

describe('in memory (embedded)', () => {
  it('refuses the 101st request of a window with 429 and the headers; health stays unlimited', async () => {
    const gateway = await gatewayWith({});
    await expectDefaultBudget(gateway);
    expect((await gateway.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await gateway.app.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode).toBe(200);
    const metrics = await scrapeMetrics(gateway);
    expect(metrics.body).toContain('rate_limited_requests_total{bucket="api"} 1');
  });

  it('counts the webhooks apart from the API', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_MAX: '3', WEBHOOK_RATE_LIMIT_MAX: '2' });
    expect((await send(3, () => apiRequest(gateway))).map((r) => r.statusCode)).toEqual([401, 401, 401]);
    expect((await apiRequest(gateway)).statusCode).toBe(429);
    const webhooks = await send(3, () => webhookRequest(gateway));
    expect(webhooks.map((r) => r.statusCode)).toEqual([200, 200, 429]);
    expect(webhooks[0]!.headers['ratelimit-limit']).toBe('2');
  });

  it('ignores a rotating X-Forwarded-For without TRUST_PROXY', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_MAX: '3' });
    const spoofed = await send(4, async () =>
      apiRequest(gateway, { 'x-forwarded-for': `203.0.113.${Math.random() * 250}` }),
    );
    expect(spoofed.map((r) => r.statusCode)).toEqual([401, 401, 401, 429]);
  });

  it('honours X-Forwarded-For from a trusted proxy (TRUST_PROXY), per client', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_MAX: '2', TRUST_PROXY: '127.0.0.1' });
    const fromClient = (ip: string) => () => apiRequest(gateway, { 'x-forwarded-for': ip });
    expect((await send(3, fromClient('203.0.113.7'))).map((r) => r.statusCode)).toEqual([401, 401, 429]);
    expect((await send(2, fromClient('203.0.113.8'))).map((r) => r.statusCode)).toEqual([401, 401]);
  });

  it('turns a budget off with 0', async () => {
    const gateway = await gatewayWith({ RATE_LIMIT_MAX: '0', WEBHOOK_RATE_LIMIT_MAX: '1' });
    const responses = await send(5, () => apiRequest(gateway));
    expect(responses.every((r) => r.statusCode === 401 && r.headers['ratelimit-limit'] === undefined)).toBe(
      true,
    );
    expect((await send(2, () => webhookRequest(gateway))).map((r) => r.statusCode)).toEqual([200, 429]);
  });
});

describe.runIf(redisAvailable)('in Redis (shared by replicas)', () => {
  it('refuses the 101st request of a window, counting across two gateways', async () => {
    const keyPrefix = uniquePrefix('ratelimit');
    const stores = await Promise.all(
      [1, 2].map(() => createRedisRateLimitStore({ url: REDIS_URL, keyPrefix, logger: silent })),
    );
    for (const store of stores) cleanups.push(() => store.close());
    // One clock for both: two clocks made either side of a minute would count in different windows.
    const now = clockAtWindowStart();
    const replicaA = await gatewayWith({}, stores[0], now);
    const replicaB = await gatewayWith({}, stores[1], now);
    await send(50, () => apiRequest(replicaA));
    const rest = await send(50, () => apiRequest(replicaB));
    expect(rest[49]!.headers['ratelimit-remaining']).toBe('0');
    expectRefused(await apiRequest(replicaA), 100);
  });
});

/** A Redis server of this test's own, on a free port, that the test can kill and restart. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await waitFor('redis-server to start', () => isReachable(`redis://127.0.0.1:${port}`, 200), 5000);
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

describe.runIf(redisAvailable)('when Redis goes down', () => {
  it('answers every request within about a second (fail open), counts the failures, and limits again once Redis is back', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    cleanups.push(() => stopRedis(redis));
    const store = await createRedisRateLimitStore({ url: `redis://127.0.0.1:${port}`, logger: silent });
    cleanups.push(() => store.close());
    const gateway = await gatewayWith({ RATE_LIMIT_MAX: '3' }, store);

    expect((await apiRequest(gateway)).headers['ratelimit-remaining']).toBe('2');

    await stopRedis(redis);
    for (let i = 0; i < 5; i += 1) {
      const started = performance.now();
      const response = await apiRequest(gateway);
      expect(performance.now() - started).toBeLessThan(1200);
      expect(response.statusCode).toBe(401);
      expect(response.headers['ratelimit-limit']).toBeUndefined();
    }
    const metrics = await scrapeMetrics(gateway);
    const failures = /rate_limit_store_errors_total\{store="redis"\} (\d+)/.exec(metrics.body);
    expect(Number(failures?.[1])).toBeGreaterThanOrEqual(5);

    redis = await startRedis(port);
    await expect
      .poll(async () => (await apiRequest(gateway)).headers['ratelimit-limit'], {
        timeout: 8000,
        interval: 200,
      })
      .toBe('3');
    const afterRecovery = await send(3, () => apiRequest(gateway));
    expect(afterRecovery.at(-1)!.statusCode).toBe(429);
  });
});

afterAll(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});
