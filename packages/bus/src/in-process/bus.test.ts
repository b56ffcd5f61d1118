import { describe, expect, it } from 'vitest';
import { describeBusContract, silentLogger, waitFor } from '../contract.js';
import type { EventEnvelope } from '../index.js';
import { createInProcessBus } from './bus.js';

describeBusContract('in-process, memory only', async (validate, options) => {
  const bus = createInProcessBus({ logger: silentLogger, validate, declareGroups: options?.declareGroups });
  return { bus, dispose: () => bus.close() };
});

describe('in-process bus', () => {
  it('hands each handler its own JSON copy of the event, as a broker would', async () => {
    const bus = createInProcessBus({ logger: silentLogger });
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
  });
});
