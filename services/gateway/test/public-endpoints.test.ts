import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildMetricsApp, createGatewayMetrics } from '../src/metrics.js';
import { createMergedDocument, type OpenApiDocument } from '../src/routing/openapi-document.js';
import { ROUTING_TABLE } from '../src/routing/table.js';
import { createTestGateway, type TestGateway } from './helpers.js';

/** Security review, finding 10: /metrics, /readyz and the merged OpenAPI document. */
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function gatewayWith(options: Parameters<typeof createTestGateway>[0] = {}): Promise<TestGateway> {
  const gateway = await createTestGateway(options);
  cleanups.push(() => gateway.close());
  return gateway;
}

const TOKEN = 'a-metrics-token-of-some-length';
const scrape = (app: FastifyInstance, authorization?: string) =>
  app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });

describe('/metrics (security review, finding 10)', () => {
  it('is not served on the API port without METRICS_TOKEN', async () => {
    const gateway = await gatewayWith();
    const response = await scrape(gateway.app);
    expect(response.statusCode).toBe(404);
    expect(response.body).not.toContain('process_cpu');
    // Not the dashboard's index.html either, though its client routes (any path without an
    // extension) are: /metrics is the operators' path whether this process serves it or not.
    expect(response.json()).toEqual({ error: 'Not found: GET /metrics' });
    const clientRoute = await gateway.app.inject({ method: 'GET', url: '/sources' });
    expect(clientRoute.statusCode).toBe(200);
    expect(clientRoute.headers['content-type']).toMatch(/^text\/html/);
  });

  it('requires Authorization: Bearer <METRICS_TOKEN> when it is set', async () => {
    const gateway = await gatewayWith({ env: { METRICS_TOKEN: TOKEN } });
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, 'Bearer ']) {
      const refused = await scrape(gateway.app, authorization);
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({ error: 'A valid metrics token is required' });
      expect(refused.body).not.toContain('process_cpu');
    }
    const scraped = await scrape(gateway.app, `Bearer ${TOKEN}`);
    expect(scraped.statusCode).toBe(200);
    expect(scraped.body).toContain('http_requests_total');
  });

  it('with METRICS_PORT, is served by the metrics app only (behind the token when set)', async () => {
    const metrics = createGatewayMetrics();
    const gateway = await createTestGateway({ env: { METRICS_TOKEN: TOKEN, METRICS_PORT: '9464' }, metrics });
    cleanups.push(() => gateway.close());
    expect((await scrape(gateway.app, `Bearer ${TOKEN}`)).statusCode).toBe(404);

    const metricsApp = buildMetricsApp({ metrics, token: TOKEN, logger: gateway.logger });
    cleanups.push(() => metricsApp.close());
    expect((await scrape(metricsApp)).statusCode).toBe(401);
    const scraped = await scrape(metricsApp, `Bearer ${TOKEN}`);
    expect(scraped.statusCode).toBe(200);
    // The API app's requests are counted in the registry the metrics app serves.
    expect(scraped.body).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);

    const open = buildMetricsApp({ metrics, logger: gateway.logger });
    cleanups.push(() => open.close());
    expect((await scrape(open)).statusCode).toBe(200);
    expect((await open.inject({ method: 'GET', url: '/api/users' })).statusCode).toBe(404);
  });
});

describe('/readyz (security review, finding 10)', () => {
  it('pings the store and the bus at most once a second, however often it is asked', async () => {
    let clock = 1_000_000;
    const gateway = await gatewayWith({ now: () => clock });
    const storePing = vi.spyOn(gateway.store, 'ping');
    const busPing = vi.spyOn(gateway.bus, 'ping');
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => gateway.app.inject({ method: 'GET', url: '/readyz' })),
    );
    expect(new Set(answers.map((response) => response.statusCode))).toEqual(new Set([200]));
    expect([storePing.mock.calls.length, busPing.mock.calls.length]).toEqual([1, 1]);
    clock += 1000;
    expect((await gateway.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect([storePing.mock.calls.length, busPing.mock.calls.length]).toEqual([2, 2]);
  });
});

describe('the merged OpenAPI document, distributed (security review, finding 10)', () => {
  const ownDocument = { openapi: '3.0.3', info: { title: 'gateway', version: '1' }, paths: {} };
  const fakeApp = { swagger: () => ownDocument } as unknown as FastifyInstance;
  const silent = { warn: () => {}, error: () => {} } as unknown as FastifyInstance['log'];

  it('asks the services once per period while one is down, not on every request', async () => {
    let clock = 0;
    let intakeUp = false;
    const calls: Record<string, number> = {};
    const fetchDocument = async (base: string): Promise<OpenApiDocument> => {
      const service = new URL(base).hostname;
      calls[service] = (calls[service] ?? 0) + 1;
      if (service === 'intake' && !intakeUp) throw new Error('ECONNREFUSED');
      return { paths: { [`/api/${service === 'lead' ? 'leads' : 'webhooks'}/x`]: {} } };
    };
    const upstreams = Object.fromEntries(
      [...new Set(ROUTING_TABLE.map((route) => route.service))].map((service) => [
        service,
        `http://${service}:3000`,
      ]),
    );
    const each = (count: number) =>
      Object.fromEntries(Object.keys(upstreams).map((service) => [service, count]));
    const documentOf = createMergedDocument(fakeApp, {
      upstreams,
      logger: silent,
      now: () => clock,
      fetchDocument,
    });

    const first = await Promise.all(Array.from({ length: 20 }, () => documentOf()));
    for (let i = 0; i < 30; i++) await documentOf();
    expect(calls).toEqual(each(1));
    expect(Object.keys(first[0]!.paths!)).toEqual(['/api/leads/x']);

    // Past the period the kept document still answers at once; one refresh runs behind it.
    intakeUp = true;
    clock += 5000;
    const stale = await Promise.all(Array.from({ length: 20 }, () => documentOf()));
    expect(Object.keys(stale[0]!.paths!)).toEqual(['/api/leads/x']);
    await vi.waitFor(async () => expect(Object.keys((await documentOf()).paths!)).toHaveLength(2));
    expect(calls).toEqual(each(2));

    // Complete: kept for 30 s.
    clock += 29_000;
    for (let i = 0; i < 10; i++) await documentOf();
    expect(calls).toEqual(each(2));
  });
});
