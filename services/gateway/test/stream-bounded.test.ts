import { waitFor } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayMetrics } from '../src/metrics.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearer,
  CapturedLog,
  createTestGateway,
  login,
  type Session,
  type TestGateway,
} from './helpers.js';
import { SseClient } from './sse-client.js';
import { leadUpdated, listen, openStalledStream } from './stream-helpers.js';

describe('the live stream, bounded', () => {
  const log = new CapturedLog();
  const metrics = createGatewayMetrics();
  let gateway: TestGateway;
  let baseUrl: string;
  let admin: Session;

  beforeAll(async () => {
    gateway = await createTestGateway({
      log,
      env: {
        RATE_LIMIT_MAX: '0',
        STREAM_BUFFER_EVENTS: '3',
        STREAM_CLIENT_BUFFER_BYTES: '16384',
        STREAM_MAX_CONNECTIONS: '3',
      },
      metrics,
    });
    baseUrl = await listen(gateway);
    admin = await login(gateway.app, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
  afterAll(async () => gateway.close());

  async function gauge(name: string): Promise<number> {
    const metric = await metrics.registry.getSingleMetric(name)!.get();
    return metric.values[0]?.value ?? 0;
  }
  const openStreams = () => gauge('live_stream_clients');

  it('sends event: reset to an id older than the buffer, or from another process, then goes on live', async () => {
    const first = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    await gateway.bus.publish('lead.updated', leadUpdated());
    const [seen] = await first.waitForEvents(1);
    first.close();
    for (let i = 0; i < 4; i++) await gateway.bus.publish('lead.updated', leadUpdated(`missed ${i}`));

    const stale = await SseClient.open(baseUrl, '/api/stream', {
      ...bearer(admin.token),
      'last-event-id': seen!.id!,
    });
    const [reset] = await stale.waitForEvents(1);
    expect(reset!.event).toBe('reset');
    expect(JSON.parse(reset!.data)).toEqual({ reason: expect.stringContaining('reload') });
    expect(Number(reset!.id)).toBe(Number(seen!.id) + 4);
    const live = await gateway.bus.publish('lead.updated', leadUpdated('after the reset'));
    await stale.waitForEvents(2);
    expect(stale.payloads().map((event) => event.id)).toEqual([live.id]);

    const foreignId = String(Number(reset!.id) + 1_000_000);
    const foreign = await SseClient.open(baseUrl, '/api/stream', {
      ...bearer(admin.token),
      'last-event-id': foreignId,
    });
    expect((await foreign.waitForEvents(1))[0]!.event).toBe('reset');
    stale.close();
    foreign.close();
    await waitFor('no stream left open', async () => (await openStreams()) === 0);
  });

  it('drops a client that does not read, while one that reads gets every event', async () => {
    const reader = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    const stalled = await openStalledStream(baseUrl, admin.token);
    const big = 'x'.repeat(60_000);
    let published = 0;
    let droppedCount = 0;
    const dropped = async () => {
      droppedCount = await gauge('live_stream_dropped_clients_total');
      return droppedCount > 0;
    };
    // The stalled socket fills the kernel's buffers first; then it holds more than the bound while
    // the buffer (3 events) moves past it.
    while (!(await dropped()) && published < 2000) {
      await gateway.bus.publish('lead.updated', leadUpdated(big));
      published++;
      await reader.waitForEvents(published);
    }
    expect(droppedCount).toBe(1);
    expect(log.text).toContain('Live stream client too slow to read; dropped');
    stalled.destroy();
    expect(reader.ended).toBe(false);
    expect(reader.events).toHaveLength(published);
    reader.close();
    await waitFor('no stream left open', async () => (await openStreams()) === 0);
  }, 60_000);

  it('answers 503 past STREAM_MAX_CONNECTIONS open streams', async () => {
    const clients = [];
    for (let i = 0; i < 3; i++)
      clients.push(await SseClient.open(baseUrl, '/api/stream', bearer(admin.token)));
    expect(clients.map((client) => client.status)).toEqual([200, 200, 200]);
    const extra = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    await extra.waitForEnd();
    expect(extra.status).toBe(503);
    expect(extra.headers['retry-after']).toBe('5');
    for (const client of clients) client.close();
    await waitFor('no stream left open', async () => (await openStreams()) === 0);
  });

  it('ends open streams when the gateway closes', async () => {
    const client = await SseClient.open(baseUrl, '/api/stream', bearer(admin.token));
    expect(client.status).toBe(200);
    await gateway.app.close();
    await client.waitForEnd();
  });
});
