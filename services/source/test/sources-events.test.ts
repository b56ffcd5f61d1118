import { randomUUID } from 'node:crypto';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import { validateEvent } from '@lead-capture/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import { logger, waitFor } from './harness.js';
import {
  closeSourceAfterEach,
  createSource,
  h,
  RECEIVING_STATE,
  type Source,
  startSource,
} from './sources-fixtures.js';

closeSourceAfterEach();

describe('events', () => {
  beforeEach(async () => {
    await startSource();
  });

  it('publishes created, updated, token_rotated and deleted with the full state and a growing revision', async () => {
    await h.bus.publish('user.created', {
      userId: h.userId,
      email: 'grace@example.com',
      name: 'Grace',
      role: 'admin',
      active: true,
    });
    const created = await createSource({ name: 'Form', fieldMappings: { mail: 'email' } });
    // The creator's name comes from the read model; wait until the user event is applied first.
    await waitFor('the user read model', async () => {
      const source = (await h.call('GET', `/api/sources/${created.id}`)).body as Source;
      return source.createdBy.name === 'Grace';
    });
    await h.call('PUT', `/api/sources/${created.id}`, { name: 'Renamed' });
    const rotated = (await h.call('POST', `/api/sources/${created.id}/regenerate-token`)).body as {
      webhookToken: string;
    };
    await h.call('DELETE', `/api/sources/${created.id}`);

    await waitFor('four events', () => h.events.length === 4);
    expect(h.events.map(({ type, data }) => ({ type, data }))).toEqual([
      {
        type: 'source.created',
        data: {
          sourceId: created.id,
          revision: 1,
          name: 'Form',
          webhookToken: created.webhookToken,
          fieldMappings: { mail: 'email' },
          ...RECEIVING_STATE,
          createdAt: created.createdAt,
          createdBy: { id: h.userId, name: expect.any(String), email: expect.any(String) },
        },
      },
      {
        type: 'source.updated',
        data: {
          sourceId: created.id,
          revision: 2,
          name: 'Renamed',
          fieldMappings: { mail: 'email' },
          ...RECEIVING_STATE,
        },
      },
      {
        type: 'source.token_rotated',
        data: { sourceId: created.id, revision: 3, webhookToken: rotated.webhookToken },
      },
      { type: 'source.deleted', data: { sourceId: created.id, revision: 4 } },
    ]);
  });

  it('names the creator in source.created when the user is known', async () => {
    await h.bus.publish('user.created', {
      userId: h.userId,
      email: 'grace@example.com',
      name: 'Grace',
      role: 'admin',
      active: true,
    });
    await waitFor('the user read model', async () => {
      const users = await h.store.collection('source_users').findOne({ _id: h.userId });
      return users !== null;
    });
    await createSource();
    await waitFor('source.created', () => h.events.length === 1);
    expect(h.events[0]?.data).toMatchObject({
      createdBy: { id: h.userId, name: 'Grace', email: 'grace@example.com' },
    });
  });
});

describe('the outbox', () => {
  it('publishes an event the bus refused once a consumer exists, without failing the request', async () => {
    // No group declared and nobody subscribed: the bus refuses source.* as unroutable.
    let bus!: MessageBus;
    await startSource({
      bus: (store) => {
        bus = createInProcessBus({ logger, store, validate: validateEvent });
        return bus;
      },
      observe: false,
      relayIntervalMs: 50,
    });
    const created = await createSource();
    expect((await h.call('GET', `/api/sources/${created.id}`)).status).toBe(200);

    const seen: unknown[] = [];
    await bus.subscribe({ group: 'test.late.observer', types: ['source.*'] }, async (event) => {
      seen.push(event.data);
    });
    await waitFor('the relayed source.created', () => seen.length === 1);
    expect(seen[0]).toMatchObject({ sourceId: created.id, revision: 1, webhookToken: created.webhookToken });
    // Nothing left to relay, and a marker sent after it arrived: no second relay of the event follows.
    await waitFor(
      'the source outbox emptied',
      async () => (await h.store.collection('source_outbox').countDocuments({})) === 0,
    );
    const marker = { sourceId: randomUUID() };
    await bus.publish('source.deleted', marker);
    await waitFor('the marker', () => seen.length >= 2);
    expect(seen).toEqual([expect.objectContaining({ sourceId: created.id }), marker]);
  });
});
