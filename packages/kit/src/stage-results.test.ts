import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from './outbox.js';
import { derivedEventId, StageResults } from './stage-results.js';

const NAMESPACE = '6f1c2b3a-9d8e-4f70-8a6b-5c4d3e2f1a0b';
const TAKE_OVER_MS = 5000;

type Trigger = EventEnvelope & { data: { leadId: string; value: number } };

function trigger(value: number): Trigger {
  const id = randomUUID();
  return {
    id,
    type: 'test.triggered',
    occurredAt: new Date().toISOString(),
    correlationId: `corr-${id}`,
    data: { leadId: randomUUID(), value },
  } as Trigger;
}

function computedId(value: number, computation: number): string {
  return derivedEventId(`${value}-${computation}`, NAMESPACE);
}

describe('StageResults', () => {
  let dataDir: string;
  let store: DocStore;
  let published: EventEnvelope[];
  let failPublish: boolean;
  let computations: number;
  let clock: number;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'stage-results-test-'));
    store = await openStore(undefined, { dataDir });
    published = [];
    failPublish = false;
    computations = 0;
    clock = Date.parse('2026-01-01T00:00:00Z');
  });

  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  function stage() {
    const bus = {
      async publishEnvelope(envelope: EventEnvelope) {
        if (failPublish) throw new Error('broker down');
        published.push(envelope);
      },
    } as unknown as MessageBus;
    const outbox = new Outbox({
      store,
      bus,
      logger: pino({ level: 'silent' }),
      collection: 'test_outbox',
      takeOverAfterMs: TAKE_OVER_MS,
      now: () => clock,
    });
    // The result in `lead.deleted`'s only field, so the event carries what was computed.
    const results = new StageResults<Trigger, { computed: string }, 'lead.deleted'>(
      { store, outbox },
      {
        collection: 'test_results',
        retentionDays: 1,
        nextType: 'lead.deleted',
        eventId: (triggerId) => derivedEventId(triggerId, NAMESPACE),
        stream: (event) => event.data.leadId,
        compute: async (event) => {
          if (event.data.value < 0) throw new Error('cannot compute a negative value');
          computations++;
          // A UUID (what lead.deleted carries) derived from the trigger and which computation this is.
          return { computed: derivedEventId(`${event.data.value}-${computations}`, NAMESPACE) };
        },
        next: (_event, result) => ({ leadId: result.computed }),
      },
    );
    return { results, outbox };
  }

  it('computes once, stores the result with its event under the derived id, and emits nothing on a redelivery', async () => {
    const { results, outbox } = stage();
    await results.createIndexes();
    await outbox.createIndexes();
    const event = trigger(21);
    await results.handle(event);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      id: derivedEventId(event.id, NAMESPACE),
      type: 'lead.deleted',
      correlationId: event.correlationId,
      causationId: event.id,
      data: { leadId: computedId(21, 1) },
    });
    expect(results.nextEventId(event.id)).toBe(derivedEventId(event.id, NAMESPACE));
    const stored = await store.collection('test_results').findOne({ _id: event.id });
    expect(stored).toMatchObject({ _id: event.id, computed: computedId(21, 1) });
    expect(stored).not.toHaveProperty('published');
    expect(await outbox.pending()).toBe(0);

    await results.handle(event);
    expect(published).toHaveLength(1);
    expect(computations).toBe(1);
  });

  it("does not look a chained hop's result up (its trigger was published in the same transaction), but keeps it", async () => {
    const { results, outbox } = stage();
    await results.createIndexes();
    await outbox.createIndexes();
    const event = trigger(7);
    const chained = { attempt: 1, group: 'test.stage', chained: true };
    await results.handler(event, chained);
    expect(published.map((envelope) => envelope.id)).toEqual([derivedEventId(event.id, NAMESPACE)]);
    expect(await store.collection('test_results').findOne({ _id: event.id })).toMatchObject({
      computed: computedId(7, 1),
    });

    // Not looked up: were the same trigger chained again, it is computed, and its change collides
    // with the stored result and rolls back (in a chain, that failed change fails the hop, and the
    // chain runs again with the trigger queued). Nothing is emitted twice.
    await results.handler(event, chained);
    expect(computations).toBe(2);
    expect(published).toHaveLength(1);
    expect(await outbox.pending()).toBe(0);
    await results.handler(event, { attempt: 2, group: 'test.stage' });
    expect(computations).toBe(2);
    expect(published).toHaveLength(1);
  });

  it('keeps the event the bus refused with its result, for the relay; a redelivery computes and emits nothing', async () => {
    const { results, outbox } = stage();
    const event = trigger(5);
    failPublish = true;
    await results.handle(event);
    expect(published).toEqual([]);
    expect(await outbox.pending()).toBe(1);
    failPublish = false;

    await results.handle(event);
    expect(computations).toBe(1);
    expect(published).toEqual([]);

    clock += TAKE_OVER_MS;
    expect(await outbox.relay()).toBe(1);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      id: derivedEventId(event.id, NAMESPACE),
      data: { leadId: computedId(5, 1) },
    });
    expect(await outbox.pending()).toBe(0);
  });

  it('handles a batch in one change: skips stored results, leaves failed computations, emits nothing twice', async () => {
    const { results, outbox } = stage();
    await results.createIndexes();
    await outbox.createIndexes();
    const handledBefore = trigger(1);
    await results.handle(handledBefore);
    published = [];
    const [first, failing, second] = [trigger(2), trigger(-1), trigger(3)];

    const left = await results.handleBatch([handledBefore, first, failing, second]);
    expect(left).toEqual([failing]);
    // In batch order, each under the id derived from its trigger.
    expect(published.map((envelope) => envelope.id)).toEqual([
      derivedEventId(first.id, NAMESPACE),
      derivedEventId(second.id, NAMESPACE),
    ]);
    expect(await store.collection('test_results').countDocuments({})).toBe(3);
    expect(await outbox.pending()).toBe(0);

    // The batch delivered again: nothing computed or emitted twice.
    const computed = computations;
    expect(await results.handleBatch([first, second])).toEqual([]);
    expect(published).toHaveLength(2);
    expect(computations).toBe(computed);
  });

  it('commits one result when two deliveries race, and every event they emit carries its id', async () => {
    const a = stage();
    const b = stage();
    const event = trigger(1);
    await Promise.all([a.results.handle(event), b.results.handle(event)]);
    expect(await store.collection('test_results').countDocuments({ _id: event.id })).toBe(1);
    const stored = await store
      .collection<{ _id: string; computed: string }>('test_results')
      .findOne({ _id: event.id });
    expect(published.length).toBeGreaterThan(0);
    for (const envelope of published) {
      expect(envelope).toMatchObject({
        id: derivedEventId(event.id, NAMESPACE),
        data: { leadId: stored!.computed },
      });
    }
  });
});
