import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageBus } from '@lead-capture/bus';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { COMMON_CONFIG, createLogger, loadConfig } from '@lead-capture/kit';
import { openTestRabbitBus, TEST_INTERNAL_KEYS, type TestRabbitBus } from '@lead-capture/kit/testing';
import { AMQP_URL, requireService } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway } from '../src/app.js';
import { GATEWAY_CONFIG } from '../src/config.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, bearer, login, newSecrets } from './helpers.js';
import { SseClient } from './sse-client.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

/**
 * Two gateway replicas, each with its own RabbitMQ connection, sharing one store (as replicas share
 * MongoDB): every replica has its own broadcast queue, so each one's open streams get every event,
 * and a ticket one replica issued opens a stream on the other.
 */
describe.runIf(rabbit)('the live stream over RabbitMQ, two gateway replicas', () => {
  const logger = createLogger({ level: 'silent', name: 'stream-rabbit-test' });
  const secrets = newSecrets();
  let dataDir: string;
  let store: DocStore;
  let rabbitBus: TestRabbitBus;
  const replicaBuses: MessageBus[] = [];
  const replicas: { app: FastifyInstance; url: string }[] = [];
  const streams: SseClient[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'stream-rabbit-'));
    store = await openStore(undefined, { dataDir });
    rabbitBus = await openTestRabbitBus('stream', { logger });
    const config = loadConfig({ ...COMMON_CONFIG, ...GATEWAY_CONFIG }, { RATE_LIMIT_MAX: '0' });
    for (let i = 0; i < 2; i++) {
      const bus = await rabbitBus.connect();
      replicaBuses.push(bus);
      const app = await buildGateway({
        logger,
        store,
        bus,
        config: { ...config, JWT_SECRET: secrets.jwtSecret },
        trust: TEST_INTERNAL_KEYS.trust,
        firstAdmin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, name: 'Ada Admin' },
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      replicas.push({ app, url: `http://127.0.0.1:${port}` });
    }
  }, 60_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    for (const { app } of replicas) await app.close();
    for (const bus of replicaBuses) await bus.close();
    await rabbitBus?.dispose();
    await store?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers each event published by a service to the streams of both replicas', async () => {
    const [first, second] = replicas;
    const admin = await login(first!.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    streams.push(await SseClient.open(first!.url, '/api/stream', bearer(admin.token)));
    // A ticket from the first replica opens a stream on the second.
    const issued = await first!.app.inject({
      method: 'POST',
      url: '/api/stream/tickets',
      headers: bearer(admin.token),
    });
    expect(issued.statusCode).toBe(201);
    const { ticket } = issued.json<{ ticket: string }>();
    streams.push(await SseClient.open(second!.url, `/api/stream?ticket=${ticket}`));
    expect(streams.map((stream) => stream.status)).toEqual([200, 200]);

    // The lead service's connection publishes; competing consumers would hand each event to one replica.
    const captured = await rabbitBus.bus.publish('lead.captured', SAMPLE_EVENT_DATA['lead.captured']);
    const scored = await rabbitBus.bus.publish('lead.scored', SAMPLE_EVENT_DATA['lead.scored']);
    for (const stream of streams) {
      await stream.waitForEvents(2);
      expect(stream.payloads().map((event) => [event.type, event.id])).toEqual([
        ['lead.captured', captured.id],
        ['lead.scored', scored.id],
      ]);
    }
  }, 30_000);
});
