import { randomUUID } from 'node:crypto';
import { createRabbitBus, type MessageBus, rabbitNames } from '@lead-capture/bus';
import { CONSUMER_GROUPS, validateEvent } from '@lead-capture/contracts';
import { AMQP_URL, requireService, uniquePrefix } from '@lead-capture/testing';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENRICH_GROUP, enrichedEventId } from '../src/index.js';
import {
  captured,
  type EnrichmentHarness,
  logger,
  OBSERVER_GROUP,
  startEnrichmentHarness,
  waitFor,
} from './harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

/** The bus's default retry delays: a subscribed group has one delay queue for each. */
const RETRY_DELAYS_MS = [1000, 5000, 25_000, 125_000];

/** Deletes what the test's bus declared under its prefix (deleting a missing queue is fine). */
async function deleteTopology(namePrefix: string): Promise<void> {
  const names = rabbitNames({ namePrefix });
  const connection = await connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    for (const group of [...CONSUMER_GROUPS.map(({ group }) => group), OBSERVER_GROUP]) {
      await channel.deleteQueue(names.queue(group));
      await channel.deleteQueue(names.deadQueue(group));
      for (const delay of RETRY_DELAYS_MS) await channel.deleteQueue(names.retryQueue(group, delay));
    }
    await channel.deleteExchange(names.exchange);
    await channel.close();
  } finally {
    await connection.close();
  }
}

describe.runIf(rabbit)('the enrichment worker over RabbitMQ', () => {
  const namePrefix = uniquePrefix('enrichment');
  let bus: MessageBus;
  let h: EnrichmentHarness;

  beforeAll(async () => {
    bus = await createRabbitBus({
      url: AMQP_URL,
      namePrefix,
      logger,
      validate: validateEvent,
      declareGroups: CONSUMER_GROUPS,
    });
    h = await startEnrichmentHarness({ bus });
  });

  afterAll(async () => {
    await h?.close();
    await deleteTopology(namePrefix);
  });

  it('dead-letters a lead.captured that fails its schema at once, and goes on with the next', async () => {
    const poisonId = randomUUID();
    const poison = {
      id: poisonId,
      type: 'lead.captured',
      occurredAt: new Date().toISOString(),
      correlationId: poisonId,
      data: { leadId: 'not-a-uuid', lead: { email: 'jane@acme-corp.com' } },
    };
    const connection = await connect(AMQP_URL);
    try {
      const channel = await connection.createConfirmChannel();
      channel.publish(
        rabbitNames({ namePrefix }).exchange,
        'lead.captured',
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
    const valid = await bus.publish('lead.captured', captured());

    await waitFor('the valid lead enriched', () => h.enriched.length === 1, 10_000);
    expect(h.enriched[0]!.id).toBe(enrichedEventId(valid.id));
    const deadLetters = await bus.listDeadLetters(ENRICH_GROUP);
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]).toMatchObject({ id: poisonId, attempts: 1 });
    expect(deadLetters[0]!.reason).toMatch(/^Invalid payload: Invalid lead.captured/);
  });
});
