import { randomUUID } from 'node:crypto';
import { type MessageBus, rabbitNames } from '@lead-capture/bus';
import { openTestRabbitBus, type TestRabbitBus } from '@lead-capture/kit/testing';
import { AMQP_URL, requireService } from '@lead-capture/testing';
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

describe.runIf(rabbit)('the enrichment worker over RabbitMQ', () => {
  let rabbitBus: TestRabbitBus;
  let namePrefix: string;
  let bus: MessageBus;
  let h: EnrichmentHarness;

  beforeAll(async () => {
    rabbitBus = await openTestRabbitBus('enrichment', { logger, extraGroups: [OBSERVER_GROUP] });
    ({ bus, namePrefix } = rabbitBus);
    h = await startEnrichmentHarness({ bus });
  });

  afterAll(async () => {
    await h?.close();
    await rabbitBus?.dispose();
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
