import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import { type EventEnvelope, validateEvent } from '@lead-capture/contracts';
import { type DocStore, type Document, openStore } from '@lead-capture/docstore';
import { killAtMarker, waitFor } from '@lead-capture/testing';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from './outbox.js';

const logger = pino({ level: 'silent' });

/** A bus that records what it is given, and refuses everything while `down` is set. */
function recordingBus() {
  const state = { down: false, published: [] as EventEnvelope[] };
  const bus = {
    async publishEnvelope(envelope: EventEnvelope) {
      if (state.down) throw new Error('broker unreachable (test)');
      state.published.push(envelope);
    },
  } as unknown as MessageBus;
  return { bus, state };
}

/**
 * Counts the reads (findOne, find) that transactions of `store` make of `collection`, by wrapping
 * the store's own transaction method (store and transactions stay the same objects: the bus and the
 * store recognize them).
 */
function countReadsInTransactions(store: DocStore, collection: string): { count: number } {
  const counter = { count: 0 };
  const transaction = store.transaction.bind(store);
  store.transaction = (work) =>
    transaction((tx) => {
      // The same transaction object, its collection() wrapped: the store knows its transactions.
      const open = tx.collection.bind(tx);
      tx.collection = <TDoc extends Document = Document>(name: string) => {
        const target = open<TDoc>(name);
        if (name !== collection) return target;
        return new Proxy(target, {
          get(object, property) {
            if (property === 'findOne' || property === 'find') counter.count++;
            const value = Reflect.get(object, property, object);
            return typeof value === 'function' ? value.bind(object) : value;
          },
        });
      };
      return work(tx);
    });
  return counter;
}

describe('Outbox', () => {
  let dataDir: string;
  let store: DocStore;
  let clock: number;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'outbox-test-'));
    store = await openStore(undefined, { dataDir });
    clock = Date.parse('2026-01-01T00:00:00Z');
  });

  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  function outboxOn(bus: MessageBus) {
    return new Outbox({ store, bus, logger, collection: 'test_outbox', now: () => clock });
  }

  it('publishes each event of a stream once when its next change comes before the delete of the last', async () => {
    const { bus, state } = recordingBus();
    // The outbox's deletes wait until the test lets them go: change() answers before the entries it
    // published are deleted (together, a moment later), so the next change of the stream finds the
    // first entry still stored, and must not send it again.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gatedStore = new Proxy(store, {
      get(target, property) {
        if (property !== 'collection') {
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (name: string) => {
          const collection = target.collection(name);
          const deleteMany = collection.deleteMany.bind(collection);
          collection.deleteMany = (async (...args: Parameters<typeof deleteMany>) => {
            await gate;
            return deleteMany(...args);
          }) as typeof collection.deleteMany;
          return collection;
        };
      },
    });
    const outbox = new Outbox({
      store: gatedStore,
      bus,
      logger,
      collection: 'test_outbox',
      now: () => clock,
    });
    await outbox.createIndexes();
    const leadId = randomUUID();
    const first = await outbox.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    const second = await outbox.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    expect(await store.collection('test_outbox').countDocuments({})).toBe(2);
    expect(state.published.map((event) => event.id)).toEqual([first.id, second.id]);
    release();
    expect(await outbox.pending()).toBe(0);
    expect(await outbox.relay()).toBe(0);
    expect(state.published).toHaveLength(2);
  });

  it('commits the writes and the event together, publishes at once and leaves nothing behind', async () => {
    const { bus, state } = recordingBus();
    const outbox = outboxOn(bus);
    await outbox.createIndexes();
    const leadId = randomUUID();
    const envelope = await outbox.change(async (change) => {
      await change.collection('test_leads').insertOne({ _id: leadId });
      return change.emit(leadId, 'lead.deleted', { leadId }, { correlationId: 'req-1' });
    });
    expect(await store.collection('test_leads').findOne({ _id: leadId })).toEqual({ _id: leadId });
    expect(state.published).toEqual([envelope]);
    expect(envelope).toMatchObject({ type: 'lead.deleted', correlationId: 'req-1', data: { leadId } });
    expect(await outbox.pending()).toBe(0);
  });

  it('keeps neither the writes nor the event of a change that throws', async () => {
    const { bus, state } = recordingBus();
    const outbox = outboxOn(bus);
    const leadId = randomUUID();
    await expect(
      outbox.change(async (change) => {
        await change.collection('test_leads').insertOne({ _id: leadId });
        await change.emit(leadId, 'lead.deleted', { leadId });
        throw new Error('validation failed later');
      }),
    ).rejects.toThrow('validation failed later');
    expect(await store.collection('test_leads').findOne({ _id: leadId })).toBeNull();
    expect(await outbox.pending()).toBe(0);
    expect(state.published).toEqual([]);
  });

  it('refuses an event whose payload breaks its schema, and keeps nothing of the change', async () => {
    const { bus } = recordingBus();
    const outbox = outboxOn(bus);
    await expect(
      outbox.change(async (change) => {
        await change.collection('test_leads').insertOne({ _id: 'x' });
        await change.emit('x', 'lead.deleted', { leadId: 'not-a-uuid' });
      }),
    ).rejects.toThrow(/lead\.deleted/);
    expect(await store.collection('test_leads').countDocuments({})).toBe(0);
  });

  it('keeps an event the bus refused, and the relay publishes it under the same id once due', async () => {
    const { bus, state } = recordingBus();
    const outbox = outboxOn(bus);
    await outbox.createIndexes();
    const leadId = randomUUID();
    state.down = true;
    const envelope = await outbox.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    expect(await outbox.pending()).toBe(1);

    // Not yet due: the request that stored it may still be publishing it.
    state.down = false;
    expect(await outbox.relay()).toBe(0);
    clock += 5000;
    expect(await outbox.relay()).toBe(1);
    expect(state.published.map((event) => event.id)).toEqual([envelope.id]);
    expect(await outbox.pending()).toBe(0);
  });

  it('backs off after a failed relay attempt, doubling the wait', async () => {
    const { bus, state } = recordingBus();
    const outbox = outboxOn(bus);
    const leadId = randomUUID();
    state.down = true;
    await outbox.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    clock += 5000;
    expect(await outbox.relay()).toBe(0); // attempt 1 fails: next in 1 s
    clock += 999;
    expect(await outbox.relay()).toBe(0); // not due: nothing tried
    clock += 1;
    expect(await outbox.relay()).toBe(0); // attempt 2 fails: next in 2 s
    state.down = false;
    clock += 1999;
    expect(await outbox.relay()).toBe(0);
    clock += 1;
    expect(await outbox.relay()).toBe(1);
    expect(state.published).toHaveLength(1);
  });

  it('publishes a stream in order: what waits goes out before the next change of the same stream', async () => {
    const { bus, state } = recordingBus();
    const outbox = outboxOn(bus);
    const stream = randomUUID();
    const other = randomUUID();
    state.down = true;
    const first = await outbox.change((change) => change.emit(stream, 'lead.deleted', { leadId: stream }));
    const unrelated = await outbox.change((change) => change.emit(other, 'lead.deleted', { leadId: other }));
    state.down = false;
    const second = await outbox.change((change) =>
      change.emit(stream, 'lead.merged', { primaryId: other, duplicateId: stream }),
    );
    expect(state.published.map((event) => event.id)).toEqual([first.id, second.id]);
    clock += 5000;
    expect(await outbox.relay()).toBe(1);
    expect(state.published.map((event) => event.id)).toEqual([first.id, second.id, unrelated.id]);
  });

  it('relays what another replica left even after finding the outbox empty (replicas share it)', async () => {
    const { bus, state } = recordingBus();
    // Replicas are processes sharing a database (MongoDB): each has a store handle of its own, on a
    // store other processes write too. (The embedded store is one process's: see the next test.)
    const sharedHandle = () =>
      new Proxy(store, {
        get(target, property) {
          if (property === 'kind') return 'mongodb';
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    const replicaOn = (handle: DocStore) =>
      new Outbox({ store: handle, bus, logger, collection: 'test_outbox', now: () => clock });
    const replicaA = replicaOn(sharedHandle());
    await replicaA.createIndexes();
    expect(await replicaA.relay()).toBe(0); // nothing there yet
    const replicaB = replicaOn(sharedHandle());
    state.down = true;
    const leadId = randomUUID();
    const envelope = await replicaB.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    state.down = false;
    clock += 60_000; // B's lease on its entry is over
    expect(await replicaA.relay()).toBe(1);
    expect(state.published.map((published) => published.id)).toEqual([envelope.id]);
  });

  it('reads nothing in an idle relay pass on an embedded store, which no other process writes', async () => {
    const { bus } = recordingBus();
    let reads = 0;
    const counted = <T extends (...args: never[]) => unknown>(read: T) =>
      ((...args: Parameters<T>) => {
        reads++;
        return read(...args);
      }) as T;
    const countingStore = new Proxy(store, {
      get(target, property) {
        if (property !== 'collection') {
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (name: string) => {
          const collection = target.collection(name);
          collection.find = counted(collection.find.bind(collection));
          collection.findOne = counted(collection.findOne.bind(collection));
          return collection;
        };
      },
    });
    const outbox = new Outbox({
      store: countingStore,
      bus,
      logger,
      collection: 'test_outbox',
      now: () => clock,
    });
    await outbox.createIndexes();
    const leadId = randomUUID();
    await outbox.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    expect(await outbox.relay()).toBe(0); // finds it empty: published at once
    reads = 0;
    expect(await outbox.relay()).toBe(0);
    expect(reads).toBe(0);
  });

  it('lets only one of two relays (two replicas) publish an entry', async () => {
    const { bus, state } = recordingBus();
    const replicaA = outboxOn(bus);
    const replicaB = outboxOn(bus);
    const leadIds = Array.from({ length: 20 }, () => randomUUID());
    state.down = true;
    for (const leadId of leadIds)
      await replicaA.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    state.down = false;
    clock += 5000;
    const [a, b] = await Promise.all([replicaA.relay(), replicaB.relay()]);
    expect(a + b).toBe(20);
    expect(new Set(state.published.map((event) => event.id)).size).toBe(20);
    expect(state.published).toHaveLength(20);
  });
});

describe('Outbox and a crash (kill -9)', () => {
  const fixture = join(import.meta.dirname, '../test/fixtures/outbox-child.ts');

  /** Runs the child until it prints `marker`, then SIGKILLs it. */
  async function runAndKill(dataDir: string, stopAt: string, leadId: string, marker: string): Promise<void> {
    await killAtMarker(fixture, [dataDir, stopAt, leadId], marker);
  }

  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'outbox-crash-'));
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('loses no event when the process dies between the commit and the publish', async () => {
    const leadId = randomUUID();
    await runAndKill(dataDir, 'publishing', leadId, 'PUBLISHING');
    const store = await openStore(undefined, { dataDir });
    try {
      const { bus, state } = recordingBus();
      // The relay of the restarted process, once the entry's take-over time (5 s) has passed.
      const later = () => Date.now() + 6000;
      const outbox = new Outbox({ store, bus, logger, collection: 'test_outbox', now: later });
      expect(await store.collection('test_leads').findOne({ _id: leadId })).not.toBeNull();
      expect(await outbox.relay()).toBe(1);
      expect(state.published).toEqual([expect.objectContaining({ type: 'lead.deleted', data: { leadId } })]);
    } finally {
      await store.close();
    }
  });

  it('keeps neither the change nor its event when the process dies before the commit', async () => {
    const leadId = randomUUID();
    await runAndKill(dataDir, 'in-work', leadId, 'IN_WORK');
    const store = await openStore(undefined, { dataDir });
    try {
      expect(await store.collection('test_leads').findOne({ _id: leadId })).toBeNull();
      expect(await store.collection('test_outbox').countDocuments({})).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe('Outbox on the in-process bus journaled in the same store', () => {
  let dataDir: string;
  let store: DocStore;
  const GROUP = 'test.lead.deleted';

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'outbox-journal-'));
    store = await openStore(undefined, { dataDir });
  });

  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  function journaledBus(types: string[] = ['lead.deleted']) {
    return createInProcessBus({
      logger,
      validate: validateEvent,
      store,
      declareGroups: [{ group: GROUP, types }],
    });
  }

  /** Subscribes to the group; `seen` collects the event ids handled, in order. */
  async function consume(bus: MessageBus) {
    const seen: string[] = [];
    await bus.subscribe({ group: GROUP, types: ['lead.deleted'] }, async (envelope) => {
      seen.push(envelope.id);
    });
    return seen;
  }

  it('queues the event in the commit of its change: no outbox entry, delivered once', async () => {
    const bus = journaledBus();
    const outbox = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    await outbox.createIndexes();
    const seen = await consume(bus);
    const failed = randomUUID();
    await expect(
      outbox.change(async (change) => {
        await change.emit(failed, 'lead.deleted', { leadId: failed });
        throw new Error('the change fails after its emit');
      }),
    ).rejects.toThrow('the change fails');
    const leadId = randomUUID();
    const envelope = await outbox.change(async (change) => {
      await change.collection('test_leads').insertOne({ _id: leadId });
      return change.emit(leadId, 'lead.deleted', { leadId });
    });
    expect(await outbox.pending()).toBe(0);
    // The failed change's event was never queued: the next one's is the only delivery.
    await waitFor('the event delivered', () => seen.length > 0, 5000);
    expect(seen).toEqual([envelope.id]);
    await bus.close();
  });

  it('keeps an event nothing receives yet as an outbox entry, for the relay', async () => {
    const bus = journaledBus(['lead.merged']);
    const outbox = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    await outbox.createIndexes();
    const leadId = randomUUID();
    await outbox.change((change) => change.emit(leadId, 'lead.deleted', { leadId }));
    expect(await outbox.pending()).toBe(1);
    await bus.close();
  });

  it('reads whether a stream has an entry waiting only while the outbox may hold one, and keeps the stream in order', async () => {
    // Nothing receives lead.deleted yet: the first event of the stream waits as an entry.
    const bus = journaledBus(['lead.merged']);
    const outbox = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    await outbox.createIndexes();
    const entryReads = countReadsInTransactions(store, 'test_outbox');
    const stream = randomUUID();
    const first = await outbox.change((change) => change.emit(stream, 'lead.deleted', { leadId: stream }));
    const seen = await consume(bus);
    // Now the group receives it, but the stream's next event must not overtake the waiting one: it
    // takes the entry path too, and both go out in order after the commit.
    const second = await outbox.change((change) => change.emit(stream, 'lead.deleted', { leadId: stream }));
    expect(entryReads.count).toBeGreaterThan(0);
    expect(await outbox.pending()).toBe(0);
    await waitFor('both events delivered', () => seen.length === 2, 5000);
    expect(seen).toEqual([first.id, second.id]);

    // The next relay pass finds the outbox empty: a change no longer reads it.
    expect(await outbox.relay()).toBe(0);
    entryReads.count = 0;
    const other = randomUUID();
    const third = await outbox.change((change) => change.emit(other, 'lead.deleted', { leadId: other }));
    expect(entryReads.count).toBe(0);
    expect(await outbox.pending()).toBe(0);
    await waitFor('the third event delivered', () => seen.length === 3, 5000);
    expect(seen[2]).toBe(third.id);
    await bus.close();
  });

  it('does not take the outbox for empty while a change has an entry uncommitted', async () => {
    const bus = journaledBus(['lead.merged']);
    const outbox = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    await outbox.createIndexes();
    expect(await outbox.relay()).toBe(0); // empty: changes stop reading it
    const stream = randomUUID();
    // Nothing receives lead.deleted yet: the change writes an entry, and a relay pass runs before its
    // commit. That pass reads committed data only: it must not conclude the outbox is empty.
    const first = await outbox.change(async (change) => {
      const envelope = await change.emit(stream, 'lead.deleted', { leadId: stream });
      expect(await outbox.relay()).toBe(0);
      return envelope;
    });
    const seen = await consume(bus);
    const second = await outbox.change((change) => change.emit(stream, 'lead.deleted', { leadId: stream }));
    await waitFor('both events delivered', () => seen.length === 2, 5000);
    expect(seen).toEqual([first.id, second.id]);
    await bus.close();
  });

  it('knows of the entries another outbox of this process wrote to the same collection', async () => {
    const bus = journaledBus(['lead.merged']);
    const first = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    const second = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    await first.createIndexes();
    expect(await first.relay()).toBe(0); // empty
    const stream = randomUUID();
    // Nothing receives lead.deleted yet: the second outbox's event waits as an entry.
    const waiting = await second.change((change) => change.emit(stream, 'lead.deleted', { leadId: stream }));
    const seen = await consume(bus);
    const next = await first.change((change) => change.emit(stream, 'lead.deleted', { leadId: stream }));
    await waitFor('both events delivered', () => seen.length === 2, 5000);
    expect(seen).toEqual([waiting.id, next.id]);
    await bus.close();
  });

  it('has the event queued once the change is committed, and nothing of a change killed before', async () => {
    const fixture = join(import.meta.dirname, '../test/fixtures/outbox-child.ts');
    await store.close();
    const committed = randomUUID();
    await killAtMarker(fixture, [dataDir, 'journal-committed', committed], 'COMMITTED');
    const killed = randomUUID();
    await killAtMarker(fixture, [dataDir, 'journal-in-work', killed], 'IN_WORK');
    store = await openStore(undefined, { dataDir });
    expect(await store.collection('test_leads').findOne({ _id: killed })).toBeNull();
    expect(await store.collection('test_outbox').countDocuments({})).toBe(0);
    const bus = journaledBus();
    const delivered: unknown[] = [];
    await bus.subscribe({ group: GROUP, types: ['lead.deleted'] }, async (envelope) => {
      delivered.push(envelope.data);
    });
    await waitFor('the committed event delivered after the restart', () => delivered.length > 0, 5000);
    // A marker event published after the restart arrives after anything else still queued.
    const marker = randomUUID();
    await bus.publish('lead.deleted', { leadId: marker });
    await waitFor('the marker', () => delivered.length > 1, 5000);
    expect(delivered).toEqual([{ leadId: committed }, { leadId: marker }]);
    await bus.close();
  });
});
