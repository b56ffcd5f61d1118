import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type EventEnvelope, type MessageBus } from '@lead-capture/bus';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { AMQP_URL, requireService, uniquePrefix, waitFor } from '@lead-capture/testing';
import pino from 'pino';
import type { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildServiceApp,
  createChainMetrics,
  createMetricsRegistry,
  CHAIN_METRIC_NAMES as M,
  Outbox,
  type ServiceModule,
} from '../src/index.js';
import { openTestRabbitBus, type TestRabbitBus } from '../src/testing/index.js';

const logger = pino({ level: 'silent' });
const rabbitUp = await requireService('RabbitMQ', AMQP_URL);

/** The value of one sample in Prometheus text, or undefined when the series is absent. */
async function sample(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const text = await registry.metrics();
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort();
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(',').filter(Boolean).sort();
    if (wanted.every((label) => have.includes(label)) && have.length === wanted.length)
      return Number(match[3]);
  }
  return undefined;
}

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

interface BusUnderTest {
  bus: MessageBus;
  close(): Promise<void>;
}

type OpenBus = (
  observer: ReturnType<typeof createChainMetrics>['observer'],
  groups: string[],
  store: DocStore,
) => Promise<BusUnderTest>;

const buses: { name: string; enabled: boolean; open: OpenBus }[] = [
  {
    name: 'in-process bus',
    enabled: true,
    open: async (observer, _groups, store) => {
      const bus = createInProcessBus({ logger, observer, store });
      return { bus, close: () => bus.close() };
    },
  },
  {
    name: 'RabbitMQ bus',
    enabled: rabbitUp,
    open: async (observer, groups) => {
      const rabbit: TestRabbitBus = await openTestRabbitBus('chain-metrics', {
        logger,
        extraGroups: groups,
        bus: { observer, validate: undefined, declareGroups: groups.map((group) => ({ group, types: [] })) },
      });
      return { bus: rabbit.bus, close: () => rabbit.dispose() };
    },
  },
];

describe.each(buses)('chain metrics on the $name', ({ enabled, open }) => {
  const prefix = uniquePrefix('metrics');
  const groups = { ok: `${prefix}.ok`, failing: `${prefix}.failing`, slow: `${prefix}.slow` };
  const types = {
    ok: `${prefix}.thing.ok`,
    failing: `${prefix}.thing.failing`,
    slow: `${prefix}.thing.slow`,
  };
  let registry: Registry;
  let clock: number;
  let underTest: BusUnderTest;
  let dataDir: string;
  let store: DocStore;

  beforeAll(async () => {
    if (!enabled) return;
    registry = createMetricsRegistry();
    clock = Date.now();
    const metrics = createChainMetrics({
      registry,
      logger,
      groups: Object.values(groups),
      now: () => clock,
      cacheMs: 0,
    });
    dataDir = await mkdtemp(join(tmpdir(), 'chain-metrics-'));
    store = await openStore(undefined, { dataDir });
    underTest = await open(metrics.observer, Object.values(groups), store);
    metrics.watch({ bus: underTest.bus, store });
  });

  afterAll(async () => {
    if (!enabled) return;
    await underTest.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it.skipIf(!enabled)(
    'counts handled, failed, retried and dead-lettered events per group, with durations',
    async () => {
      const { bus } = underTest;
      await bus.subscribe({ group: groups.ok, types: [types.ok] }, async () => {});
      await bus.subscribe(
        { group: groups.failing, types: [types.failing], maxAttempts: 2, retryDelayMs: () => 1000 },
        async () => {
          throw new Error('always fails (test)');
        },
      );
      await bus.publish(types.ok, { n: 1 });
      await bus.publish(types.ok, { n: 2 });
      await bus.publish(types.failing, { n: 3 });

      await waitFor(
        'two handled events',
        async () => (await sample(registry, M.handled, { group: groups.ok })) === 2,
      );
      await waitFor(
        'the failing event dead-lettered',
        async () => (await sample(registry, M.deadLettered, { group: groups.failing })) === 1,
      );
      expect(await sample(registry, M.failed, { group: groups.failing })).toBe(2);
      expect(await sample(registry, M.retried, { group: groups.failing })).toBe(1);
      expect(await sample(registry, M.failed, { group: groups.ok })).toBeUndefined();
      expect(
        await sample(registry, `${M.handlerDuration}_count`, { group: groups.ok, outcome: 'handled' }),
      ).toBe(2);
      expect(
        await sample(registry, `${M.handlerDuration}_count`, {
          group: groups.failing,
          outcome: 'dead-lettered',
        }),
      ).toBe(1);
      // The broker's (journal's) own view: the dead letter is in the group's DLQ.
      await waitFor(
        'the DLQ size',
        async () => (await sample(registry, M.deadLetters, { group: groups.failing })) === 1,
      );
      expect(await sample(registry, M.queueConsumers, { group: groups.ok })).toBe(1);
    },
  );

  it.skipIf(!enabled)('reports queue depth and the age of the oldest unprocessed event', async () => {
    const { bus } = underTest;
    const release = gate();
    const started: EventEnvelope[] = [];
    await bus.subscribe({ group: groups.slow, types: [types.slow], prefetch: 1 }, async (event) => {
      started.push(event);
      await release.opened;
    });
    const first = await bus.publish(types.slow, { n: 1 });
    await bus.publish(types.slow, { n: 2 });
    await bus.publish(types.slow, { n: 3 });
    await waitFor('the first slow event held', () => started.length === 1);

    clock = Date.parse(first.occurredAt) + 42_000;
    expect(await sample(registry, M.oldestUnprocessedAge, { group: groups.slow })).toBeCloseTo(42, 3);
    await waitFor(
      'two events waiting behind it',
      async () => (await sample(registry, M.queueReady, { group: groups.slow })) === 2,
    );
    expect(await sample(registry, M.queueConsumers, { group: groups.slow })).toBe(1);

    release.open();
    await waitFor(
      'all three handled',
      async () => (await sample(registry, M.handled, { group: groups.slow })) === 3,
    );
    expect(await sample(registry, M.oldestUnprocessedAge, { group: groups.slow })).toBe(0);
    await waitFor(
      'the queue empty',
      async () => (await sample(registry, M.queueReady, { group: groups.slow })) === 0,
    );
  });
});

describe('outbox backlog', () => {
  let dataDir: string;
  let store: DocStore;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'outbox-metrics-'));
    store = await openStore(undefined, { dataDir });
  });

  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('counts the events each outbox of the store has not published yet', async () => {
    const state = { down: true };
    const bus = {
      async publishEnvelope() {
        if (state.down) throw new Error('broker unreachable (test)');
      },
    } as unknown as MessageBus;
    const outbox = new Outbox({ store, bus, logger, collection: 'metrics_test_outbox' });
    await outbox.createIndexes();
    const registry = createMetricsRegistry();
    createChainMetrics({ registry, logger, groups: [], cacheMs: 0 }).watch({ bus, store });

    for (const n of [1, 2]) {
      await outbox.change(async (change) => {
        await change.emit(`lead-${n}`, 'lead.received', SAMPLE_EVENT_DATA['lead.received']);
      });
    }
    expect(await sample(registry, M.outboxPending, { outbox: 'metrics_test_outbox' })).toBe(2);

    state.down = false;
    await outbox.publishStream('lead-1');
    expect(await sample(registry, M.outboxPending, { outbox: 'metrics_test_outbox' })).toBe(1);
  });
});

describe('/metrics on a service process', () => {
  const token = 'a-metrics-token-for-the-tests';
  let dataDir: string;
  let store: DocStore;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'service-metrics-'));
    store = await openStore(undefined, { dataDir });
  });

  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is served without an internal identity, behind the metrics token, with the chain metrics', async () => {
    const registry = createMetricsRegistry();
    const metrics = createChainMetrics({ registry, logger, groups: ['metrics.test'] });
    const bus = createInProcessBus({ logger, observer: metrics.observer, store });
    metrics.watch({ bus, store });
    const module: ServiceModule = { name: 'probe', routePrefixes: [] };
    const app = await buildServiceApp(
      module,
      { logger, store, bus },
      { internalSecret: 'an-internal-secret-for-the-tests-0123456789', metrics: { registry, token } },
    );
    try {
      const refused = await app.inject({ method: 'GET', url: '/metrics' });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({ error: 'A valid metrics token is required' });
      const served = await app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(served.statusCode).toBe(200);
      expect(served.body).toContain(`${M.queueConsumers}{group="metrics.test"} 0`);
      expect(served.body).toContain('process_resident_memory_bytes');
      // Everything else still needs the gateway's identity.
      expect((await app.inject({ method: 'GET', url: '/internal/anything' })).statusCode).toBe(401);
    } finally {
      await app.close();
      await bus.close();
    }
  });

  it('is not served when the process was given no metrics access', async () => {
    const bus = createInProcessBus({ logger, store });
    const app = await buildServiceApp(
      { name: 'probe', routePrefixes: [] },
      { logger, store, bus },
      { internalSecret: 'an-internal-secret-for-the-tests-0123456789' },
    );
    try {
      // Not a public route: like any other path it needs the gateway's identity.
      const answer = await app.inject({ method: 'GET', url: '/metrics' });
      expect(answer.statusCode).toBe(401);
      expect(answer.json()).toEqual({ error: 'Missing internal identity' });
    } finally {
      await app.close();
      await bus.close();
    }
  });
});
