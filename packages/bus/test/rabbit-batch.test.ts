import { AMQP_URL, requireService, uniquePrefix } from '@lead-capture/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, waitFor } from '../src/contract.js';
import { createRabbitBus, type EventEnvelope, type MessageBus, rabbitNames } from '../src/index.js';
import { queueDepth, TopologyTracker } from './rabbit-harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

describe.runIf(rabbit)('RabbitMQ bus, batch subscriptions', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function openBus(topology: TopologyTracker, group: string): Promise<MessageBus> {
    const bus = await createRabbitBus({
      url: AMQP_URL,
      logger: silentLogger,
      namePrefix: topology.namePrefix,
      declareGroups: [{ group, types: ['x.work'] }],
    });
    cleanups.push(() => bus.close());
    return topology.track(bus);
  }

  function newTopology(): TopologyTracker {
    const topology = new TopologyTracker(uniquePrefix('batch'));
    cleanups.unshift(() => topology.cleanup());
    return topology;
  }

  it('hands over what the prefetch holds in queue order, retries a failing event alone, acks every delivery once', async () => {
    const topology = newTopology();
    const bus = await openBus(topology, 'batched');
    // Published before the consumer starts: the prefetch fills at once.
    const sent = await Promise.all(Array.from({ length: 60 }, (_, n) => bus.publish('x.work', { n })));
    const failing = sent[25]!.id;
    const batches: string[][] = [];
    // Every first attempt, from a batch or alone (a batch of one is handled alone), as it happened.
    const firstAttempts: string[] = [];
    const attemptsOfFailing: number[] = [];
    const handled: string[] = [];
    await bus.subscribe(
      {
        group: 'batched',
        types: ['x.work'],
        prefetch: 20,
        retryDelayMs: () => 50,
        batch: async (events) => {
          batches.push(events.map((event) => event.id));
          firstAttempts.push(...events.map((event) => event.id));
          handled.push(...events.filter((event) => event.id !== failing).map((event) => event.id));
          return events.filter((event) => event.id === failing);
        },
      },
      async (event, { attempt }) => {
        if (event.id === failing) attemptsOfFailing.push(attempt);
        else firstAttempts.push(event.id);
        if (event.id === failing && attempt === 1) throw new Error('fails once');
        handled.push(event.id);
      },
    );
    await waitFor('every event handled', () => handled.length === 60);

    expect([...handled].sort()).toEqual(sent.map((event) => event.id).sort());
    expect(batches.some((batch) => batch.length > 1)).toBe(true);
    expect(Math.max(...batches.map((batch) => batch.length))).toBeLessThanOrEqual(20);
    expect(firstAttempts).toEqual(sent.map((event) => event.id));
    // Left by its batch: handled alone, failed, retried alone.
    expect(attemptsOfFailing).toEqual([1, 2]);
    // Closing flushes the last acks; nothing comes back to the queue.
    await bus.close();
    expect(await queueDepth(rabbitNames({ namePrefix: topology.namePrefix }).queue('batched'))).toBe(0);
  });

  it('handles every event of a batch whose handler throws one by one', async () => {
    const topology = newTopology();
    const bus = await openBus(topology, 'thrown');
    const sent = await Promise.all(Array.from({ length: 10 }, (_, n) => bus.publish('x.work', { n })));
    let batchCalls = 0;
    const alone: EventEnvelope[] = [];
    await bus.subscribe(
      {
        group: 'thrown',
        types: ['x.work'],
        prefetch: 10,
        batch: async (events) => {
          batchCalls++;
          throw new Error(`the batch of ${events.length} fails`);
        },
      },
      async (event) => {
        alone.push(event);
      },
    );
    await waitFor('every event handled alone', () => alone.length === 10);
    expect(batchCalls).toBeGreaterThan(0);
    expect(alone.map((event) => event.id)).toEqual(sent.map((event) => event.id));
    await bus.close();
    expect(await queueDepth(rabbitNames({ namePrefix: topology.namePrefix }).queue('thrown'))).toBe(0);
  });
});
