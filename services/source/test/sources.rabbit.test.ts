import type { MessageBus } from '@lead-capture/bus';
import { openTestRabbitBus, type TestRabbitBus } from '@lead-capture/kit/testing';
import { AMQP_URL, requireService } from '@lead-capture/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger, OBSERVER_GROUP, type SourceHarness, startSourceHarness, waitFor } from './harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

describe.runIf(rabbit)('the source flow over RabbitMQ', () => {
  let rabbitBus: TestRabbitBus;
  let bus: MessageBus;
  let h: SourceHarness;

  beforeAll(async () => {
    rabbitBus = await openTestRabbitBus('source', { logger, extraGroups: [OBSERVER_GROUP] });
    ({ bus } = rabbitBus);
    h = await startSourceHarness({ bus });
  });

  afterAll(async () => {
    await h?.close();
    await rabbitBus?.dispose();
  });

  it('consumes user events and publishes every source change with its revision', async () => {
    await bus.publish('user.created', {
      userId: h.userId,
      email: 'linus@example.com',
      name: 'Linus',
      role: 'member',
      active: true,
    });
    await waitFor('the user read model', async () => {
      return (await h.store.collection('source_users').findOne({ _id: h.userId })) !== null;
    });

    const created = (await h.call('POST', '/api/sources', { name: 'Landing page' })).body as {
      id: string;
      webhookToken: string;
      createdAt: string;
    };
    expect((await h.call('GET', '/api/sources')).body).toEqual([
      expect.objectContaining({
        id: created.id,
        createdBy: { id: h.userId, name: 'Linus', email: 'linus@example.com' },
      }),
    ]);
    expect(
      (await h.call('PUT', `/api/sources/${created.id}`, { fieldMappings: { mail: 'email' } })).status,
    ).toBe(200);
    const rotated = await h.call('POST', `/api/sources/${created.id}/regenerate-token`);
    expect(rotated.status).toBe(200);
    const { webhookToken } = rotated.body as { webhookToken: string };
    expect((await h.call('DELETE', `/api/sources/${created.id}`)).status).toBe(204);

    await waitFor('four source events', () => h.events.length === 4, 10_000);
    // A source created without a format or secrets: generic, every secret null (not set).
    const receivingDefaults = {
      format: 'generic',
      nameSplit: 'first-word',
      verifyToken: null,
      signingSecret: null,
      graphAccessToken: null,
    };
    expect(h.events.map(({ type, data }) => ({ type, data }))).toEqual([
      {
        type: 'source.created',
        data: {
          sourceId: created.id,
          revision: 1,
          name: 'Landing page',
          webhookToken: created.webhookToken,
          fieldMappings: {},
          ...receivingDefaults,
          createdAt: created.createdAt,
          createdBy: { id: h.userId, name: 'Linus', email: 'linus@example.com' },
        },
      },
      {
        type: 'source.updated',
        data: {
          sourceId: created.id,
          revision: 2,
          name: 'Landing page',
          fieldMappings: { mail: 'email' },
          ...receivingDefaults,
        },
      },
      { type: 'source.token_rotated', data: { sourceId: created.id, revision: 3, webhookToken } },
      { type: 'source.deleted', data: { sourceId: created.id, revision: 4 } },
    ]);
    expect(
      h.intake.calls.map(({ method, body }) => [method, (body as { revision: number }).revision]),
    ).toEqual([
      ['PUT', 1],
      ['PUT', 2],
      ['PUT', 3],
      ['DELETE', 4],
    ]);
  });
});
