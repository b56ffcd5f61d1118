import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AMQP_URL, requireService, startTcpProxy, type TcpProxy, uniquePrefix } from '@lead-capture/testing';
import { connect } from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import { describeBusContract, silentLogger, sleep, waitFor } from '../src/contract.js';
import {
  createRabbitBus,
  type EventEnvelope,
  type MessageBus,
  type RabbitBusOptions,
  rabbitNames,
  UnconfirmedError,
} from '../src/index.js';
import { queueDepth, TopologyTracker } from './rabbit-harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);
const run = promisify(execFile);
const rabbitmqctl = rabbit && (await hasRabbitmqctl());

describeBusContract(
  'RabbitMQ',
  async (validate, options) => {
    const topology = new TopologyTracker(uniquePrefix('bus'));
    const bus = await createRabbitBus({
      url: AMQP_URL,
      logger: silentLogger,
      namePrefix: topology.namePrefix,
      validate,
      declareGroups: options?.declareGroups,
    });
    return {
      bus: topology.track(bus),
      dispose: async () => {
        await bus.close();
        await topology.cleanup();
      },
    };
  },
  { skip: !rabbit },
);

describe.runIf(rabbit)('RabbitMQ bus', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A bus with its own prefix, closed and cleaned up after the test. */
  async function openBus(
    topology: TopologyTracker,
    options: Partial<RabbitBusOptions> = {},
  ): Promise<MessageBus> {
    const bus = await createRabbitBus({
      url: AMQP_URL,
      logger: silentLogger,
      namePrefix: topology.namePrefix,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      ...options,
    });
    cleanups.push(() => bus.close());
    return topology.track(bus);
  }

  function newTopology(): TopologyTracker {
    const topology = new TopologyTracker(uniquePrefix('bus'));
    cleanups.unshift(() => topology.cleanup());
    return topology;
  }

  async function newProxy(): Promise<TcpProxy> {
    const proxy = await startTcpProxy(AMQP_URL);
    cleanups.unshift(() => proxy.close());
    return proxy;
  }

  it('names its topology prefix.group, prefix.group.retry.<ms>, prefix.group.dead', async () => {
    const topology = newTopology();
    const bus = await openBus(topology);
    await bus.subscribe(
      { group: 'svc.lead.received', types: ['lead.received'], maxAttempts: 3, retryDelayMs: (r) => r * 1000 },
      async () => {},
    );
    const p = topology.namePrefix;
    expect(topology.queues().sort()).toEqual(
      [
        `${p}.svc.lead.received`,
        `${p}.svc.lead.received.dead`,
        `${p}.svc.lead.received.retry.1000`,
        `${p}.svc.lead.received.retry.2000`,
      ].sort(),
    );
    for (const queue of topology.queues()) expect(await queueDepth(queue)).toBe(0);
    expect(rabbitNames({ namePrefix: p }).exchange).toBe(`${p}.lead-capture`);
  });

  it('shares a group between two processes (two connections)', async () => {
    const topology = newTopology();
    const [one, two] = [await openBus(topology), await openBus(topology)];
    const handled: [string[], string[]] = [[], []];
    // Each handler holds its event until both processes have one: the broker must hand the group's
    // events to the idle process rather than queue them behind the busy one.
    let bothBusy!: () => void;
    const bothHaveOne = new Promise<void>((resolve) => (bothBusy = resolve));
    for (const [index, bus] of [one, two].entries()) {
      await bus.subscribe({ group: 'shared', types: ['x.work'], prefetch: 1 }, async (event) => {
        handled[index as 0 | 1].push(event.id);
        if (handled[0].length > 0 && handled[1].length > 0) bothBusy();
        await bothHaveOne;
      });
    }
    const sent = await Promise.all(Array.from({ length: 30 }, (_, n) => one.publish('x.work', { n })));
    await waitFor('30 handled', () => handled[0].length + handled[1].length === 30);
    expect([...handled[0], ...handled[1]].sort()).toEqual(sent.map((event) => event.id).sort());
    expect(handled[0].length).toBeGreaterThan(0);
    expect(handled[1].length).toBeGreaterThan(0);
  });

  it('dead-letters unparseable JSON and non-envelopes at once, keeping the raw body', async () => {
    const topology = newTopology();
    const bus = await openBus(topology);
    let calls = 0;
    await bus.subscribe({ group: 'raw', types: ['x.raw'] }, async () => {
      calls++;
    });
    const connection = await connect(AMQP_URL);
    const channel = await connection.createConfirmChannel();
    const exchange = rabbitNames({ namePrefix: topology.namePrefix }).exchange;
    channel.publish(exchange, 'x.raw', Buffer.from('{not json'), { messageId: 'm-1', persistent: true });
    channel.publish(exchange, 'x.raw', Buffer.from('{"hello":"world"}'), {
      messageId: 'm-2',
      persistent: true,
    });
    await channel.waitForConfirms();
    await connection.close();

    await waitFor('two dead letters', async () => (await bus.listDeadLetters('raw')).length === 2);
    const [unparseable, notEnvelope] = await bus.listDeadLetters('raw');
    expect(unparseable).toMatchObject({
      id: 'm-1',
      attempts: 1,
      raw: '{not json',
      event: { type: 'x.raw', data: null },
    });
    expect(unparseable!.reason).toMatch(/^Unparseable message/);
    expect(notEnvelope).toMatchObject({ id: 'm-2', raw: '{"hello":"world"}' });
    expect(notEnvelope!.reason).toContain('"id"');
    expect(calls).toBe(0);
  });

  it('rejects a publish nobody receives, and lists nothing for an unknown group', async () => {
    const topology = newTopology();
    const bus = await openBus(topology);
    await expect(bus.publish('x.nobody', {})).rejects.toThrow(/Unroutable/);
    expect(await bus.listDeadLetters('never-declared')).toEqual([]);
    expect(await bus.replayDeadLetters('never-declared')).toBe(0);
    await bus.ping();
  });

  it('reconnects after the network drops: ping fails meanwhile, waiting publishes go through, consumers resume', async () => {
    const topology = newTopology();
    const proxy = await newProxy();
    const bus = await openBus(topology, { url: proxy.url, publishTimeoutMs: 5000 });
    const received: string[] = [];
    await bus.subscribe({ group: 'resume', types: ['x.resume'] }, async (event) => {
      received.push(event.id);
    });
    const before = await bus.publish('x.resume', {});
    await waitFor('the first event', () => received.length === 1);

    proxy.refuse(true);
    proxy.dropAll();
    await waitFor('ping to fail', () =>
      bus.ping().then(
        () => false,
        () => true,
      ),
    );
    const published = bus.publish('x.resume', {});
    let settled = false;
    void published.finally(() => {
      settled = true;
    });
    // The bus has tried to reconnect (twice more, after the publish began) and is still held off:
    // the publish is still waiting, neither confirmed nor failed.
    const refusedBefore = proxy.refused;
    await waitFor('two more refused reconnects', () => proxy.refused >= refusedBefore + 2);
    expect(settled).toBe(false);

    proxy.refuse(false);
    const during = await published;
    await waitFor('the event published while disconnected', () => received.includes(during.id));
    await bus.ping();
    const after = await bus.publish('x.resume', {});
    await waitFor('an event after the reconnect', () => received.includes(after.id));
    expect(received.filter((id) => id === before.id)).toHaveLength(1);
  });

  it('rejects a publish that cannot be confirmed within publishTimeoutMs', async () => {
    const topology = newTopology();
    const proxy = await newProxy();
    const bus = await openBus(topology, { url: proxy.url, publishTimeoutMs: 300 });
    await bus.subscribe({ group: 'timeout', types: ['x.timeout'] }, async () => {});
    proxy.refuse(true);
    proxy.dropAll();
    await waitFor('ping to fail', () =>
      bus.ping().then(
        () => false,
        () => true,
      ),
    );
    const started = Date.now();
    await expect(bus.publish('x.timeout', {})).rejects.toThrow(UnconfirmedError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('loses no confirmed message and settles none twice when its connection is cut mid-stream', async () => {
    const topology = newTopology();
    const proxy = await newProxy();
    const bus = await openBus(topology, { url: proxy.url, publishTimeoutMs: 10_000 });
    const deliveries = new Map<string, boolean[]>();
    const effects = new Map<string, number>();
    await bus.subscribe({ group: 'stream', types: ['x.stream'], prefetch: 50 }, async (event, context) => {
      const flags = deliveries.get(event.id) ?? [];
      flags.push(context.redelivered === true);
      deliveries.set(event.id, flags);
      await sleep(1);
      // The idempotent effect: keyed by event id, applied once however often the event arrives.
      if (!effects.has(event.id)) effects.set(event.id, 1);
    });

    const total = 600;
    const confirmed: string[] = [];
    const rejected: unknown[] = [];
    const publishes: Promise<void>[] = [];
    for (let batch = 0; batch < 12; batch++) {
      for (let i = 0; i < total / 12; i++) {
        const n = batch * 50 + i;
        publishes.push(
          bus
            .publish('x.stream', { n }, { id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` })
            .then(
              (event: EventEnvelope) => {
                confirmed.push(event.id);
              },
              (error: unknown) => {
                rejected.push(error);
              },
            ),
        );
      }
      if (batch === 3 || batch === 8) proxy.dropAll();
      await sleep(15);
    }
    await Promise.all(publishes);

    expect(confirmed.length + rejected.length).toBe(total);
    // Publishing went on across both cuts: events from after the last one were confirmed too.
    expect(confirmed.filter((id) => Number(id.slice(-12)) >= 450).length).toBeGreaterThan(0);
    for (const error of rejected) expect(error).toBeInstanceOf(UnconfirmedError);
    await waitFor('every confirmed event handled', () => confirmed.every((id) => effects.has(id)), 20_000);
    await bus.close();
    // Closed after draining: nothing left ready or unacknowledged, nothing dead-lettered. Every
    // delivery there will ever be has then happened, so the checks below see them all.
    const names = rabbitNames({ namePrefix: topology.namePrefix });
    expect(await queueDepth(names.queue('stream'))).toBe(0);
    expect(await queueDepth(names.deadQueue('stream'))).toBe(0);

    // At least once: an event may arrive again after a lost ack, but then flagged redelivered.
    for (const [id, flags] of deliveries) {
      expect(flags.slice(1).every(Boolean), `${id} delivered again without the redelivered flag`).toBe(true);
    }
    expect([...effects.values()].every((count) => count === 1)).toBe(true);
    const redelivered = [...deliveries.values()].filter((flags) => flags.length > 1).length;
    console.info(
      `[bus] cut twice: ${confirmed.length} confirmed, ${rejected.length} rejected (unconfirmed at the cut), ${redelivered} redelivered`,
    );
  });

  it.runIf(rabbitmqctl)(
    'recovers when the broker closes its connection (rabbitmqctl close_connection)',
    async () => {
      const topology = newTopology();
      const connectionName = `${topology.namePrefix}-conn`;
      const warnings: string[] = [];
      const logger = { ...silentLogger, warn: (_: object, message: string) => void warnings.push(message) };
      const bus = await openBus(topology, { connectionName, publishTimeoutMs: 10_000, logger });
      const handled = new Set<string>();
      await bus.subscribe({ group: 'forced', types: ['x.forced'], prefetch: 20 }, async (event) => {
        await sleep(2);
        handled.add(event.id);
      });
      const pid = await connectionPid(connectionName);
      const confirmed: string[] = [];
      const publishing = Promise.all(
        Array.from({ length: 250 }, (_, n) =>
          sleep(n * 10)
            .then(() => bus.publish('x.forced', { n }))
            .then(
              (event) => void confirmed.push(event.id),
              (error: unknown) => expect(error).toBeInstanceOf(UnconfirmedError),
            ),
        ),
      );
      // Cut the connection mid-stream: once some publishes are confirmed, while most are still to come.
      await waitFor('the first confirms', () => confirmed.length >= 20);
      await run('rabbitmqctl', ['close_connection', pid, 'fault injection by the bus tests']);
      await publishing;
      expect(warnings).toContain('Lost the RabbitMQ connection; reconnecting');
      await waitFor('every confirmed event handled', () => confirmed.every((id) => handled.has(id)), 20_000);
      expect(confirmed.length).toBeGreaterThan(200);
      await waitFor('ping', () =>
        bus.ping().then(
          () => true,
          () => false,
        ),
      );
    },
  );
});

async function hasRabbitmqctl(): Promise<boolean> {
  return run('rabbitmqctl', ['--version']).then(
    () => true,
    () => false,
  );
}

/** The broker-side pid of our own connection, found by its connection_name client property. */
async function connectionPid(name: string): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'pid', 'client_properties', '-q']);
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${name}"}`))
    .map((line) => line.split('\t')[0]!);
  expect(pids).toHaveLength(1);
  return pids[0]!;
}
