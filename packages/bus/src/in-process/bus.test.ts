import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@lead-capture/docstore';
import { describe, expect, it } from 'vitest';
import { silentLogger, waitFor } from '../contract.js';
import type { EventEnvelope } from '../index.js';
import { createInProcessBus } from './bus.js';

describe('in-process bus', () => {
  it('hands each handler its own JSON copy of the event, as a broker would', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'bus-copies-'));
    const store = await openStore(undefined, { dataDir });
    const bus = createInProcessBus({ logger: silentLogger, store });
    const received: EventEnvelope[] = [];
    for (const group of ['a', 'b']) {
      await bus.subscribe({ group, types: ['x.copy'] }, async (event) => {
        received.push(event);
        (event.data as { list: number[] }).list.push(99);
      });
    }
    const at = new Date('2024-01-02T03:04:05.000Z');
    await bus.publish('x.copy', { list: [1], at });
    await waitFor('both groups', () => received.length === 2);
    for (const event of received) expect(event.data).toEqual({ list: [1, 99], at: at.toISOString() });
    await bus.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses a store without SQL tables for its queues (MongoDB goes with RabbitMQ)', () => {
    const mongoLike = { kind: 'mongodb', sql: undefined } as unknown as Parameters<
      typeof createInProcessBus
    >[0]['store'];
    expect(() => createInProcessBus({ logger: silentLogger, store: mongoLike })).toThrow(
      /keeps its queues in the embedded store; a mongodb store has none: use RabbitMQ \(AMQP_URL\)/,
    );
  });
});
