import { randomUUID } from 'node:crypto';
import { type MessageBus, rabbitNames } from '@lead-capture/bus';
import type { EventEnvelope } from '@lead-capture/contracts';
import type { DocStore } from '@lead-capture/docstore';
import { openTestRabbitBus, openTestStore, type TestRabbitBus } from '@lead-capture/kit/testing';
import { AMQP_URL, type BusFaults, faultyBus, requireService } from '@lead-capture/testing';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCORE_GROUP, scoredEventId } from '../src/index.js';
import {
  enriched,
  logger,
  OBSERVER_GROUP,
  type ScoringHarness,
  startScoringHarness,
  waitFor,
} from './harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

/** How many lead.scored events a replica's connection published. */
const scoredBy = (faults: BusFaults) => faults.published.filter((type) => type === 'lead.scored').length;

describe.runIf(rabbit)('the scoring worker over RabbitMQ', () => {
  let rabbitBus: TestRabbitBus;
  let namePrefix: string;
  let testStore: { store: DocStore; remove(): Promise<void> };
  let store: DocStore;
  let upstream: MessageBus;
  const replicas: Array<{ faults: BusFaults; harness: ScoringHarness }> = [];
  const scored: EventEnvelope[] = [];

  beforeAll(async () => {
    // Replicas share one store, as they share one MongoDB in production.
    testStore = await openTestStore('scoring-rabbit');
    store = testStore.store;
    rabbitBus = await openTestRabbitBus('scoring', { logger, extraGroups: [OBSERVER_GROUP] });
    ({ bus: upstream, namePrefix } = rabbitBus);
    await upstream.subscribe({ group: OBSERVER_GROUP, types: ['lead.scored'] }, async (event) => {
      scored.push(event);
    });
    for (let i = 0; i < 2; i++) {
      const { bus, faults } = faultyBus(await rabbitBus.connect());
      replicas.push({ faults, harness: await startScoringHarness({ bus, store, observe: false }) });
    }
  });

  afterAll(async () => {
    for (const { harness } of replicas) await harness.close();
    await rabbitBus?.dispose();
    await testStore?.remove();
  });

  it('shares the leads between two replicas of one group, each lead scored once', async () => {
    const sent = await Promise.all(
      Array.from({ length: 40 }, () => upstream.publish('lead.enriched', enriched())),
    );
    const scoredByReplicas = () => replicas.reduce((sum, { faults }) => sum + scoredBy(faults), 0);
    // A replica counts its publish once the broker confirmed it, which may be after the observer got it.
    await waitFor('40 scored leads', () => scored.length >= 40 && scoredByReplicas() >= 40, 15_000);

    expect(scored.map((event) => event.id).sort()).toEqual(
      sent.map((event) => scoredEventId(event.id)).sort(),
    );
    expect(new Set(scored.map((event) => (event.data as { leadId: string }).leadId)).size).toBe(40);
    const [one, two] = replicas.map(({ faults }) => scoredBy(faults));
    expect(one! + two!).toBe(40);
    expect(one).toBeGreaterThan(0);
    expect(two).toBeGreaterThan(0);
  });

  it('dead-letters a lead.enriched that fails its schema at once, and goes on with the next', async () => {
    const poisonId = randomUUID();
    const poison = {
      id: poisonId,
      type: 'lead.enriched',
      occurredAt: new Date().toISOString(),
      correlationId: poisonId,
      data: { leadId: randomUUID(), enrichment: { email: 'not an object' } },
    };
    const connection = await connect(AMQP_URL);
    try {
      const channel = await connection.createConfirmChannel();
      channel.publish(
        rabbitNames({ namePrefix }).exchange,
        'lead.enriched',
        Buffer.from(JSON.stringify(poison)),
        {
          messageId: poisonId,
          persistent: true,
          contentType: 'application/json',
        },
      );
      await channel.waitForConfirms();
    } finally {
      await connection.close();
    }
    const before = scored.length;
    const valid = await upstream.publish('lead.enriched', enriched());

    await waitFor('the valid lead scored', () => scored.length === before + 1, 10_000);
    expect(scored.at(-1)!.id).toBe(scoredEventId(valid.id));
    const deadLetters = await upstream.listDeadLetters(SCORE_GROUP);
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]).toMatchObject({ id: poisonId, attempts: 1 });
    expect(deadLetters[0]!.reason).toMatch(/^Invalid payload: Invalid lead.enriched/);
  });
});
