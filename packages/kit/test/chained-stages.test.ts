import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, ForegroundWork, type InProcessMessageBus } from '@lead-capture/bus';
import { type EventEnvelope, type EventOf, validateEvent } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { waitFor } from '@lead-capture/testing';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../src/outbox.js';
import { derivedEventId } from '../src/stage-results.js';

const logger = pino({ level: 'silent' });
const GROUPS = [
  { group: 'test.capture', types: ['lead.received'] },
  { group: 'test.enrich', types: ['lead.captured'] },
  { group: 'test.captured.log', types: ['lead.captured'] },
  { group: 'test.enriched.log', types: ['lead.enriched'] },
];
/** The submission id of lead n (a UUID, as the schema wants). */
const sub = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const CAPTURED_NS = '0f2b6a8e-3c1d-4e5f-9a7b-8c6d5e4f3a21';
const ENRICHED_NS = '6c1e0a9b-2d3f-4a5b-8c7d-9e0f1a2b3c4d';

/**
 * Two chained stages on the in-process bus and the embedded store, as the services run them (kit's
 * Outbox, idempotent on derived event ids), with two queued read models beside them.
 */
describe('chained stages on the in-process bus (issue 25)', () => {
  let dataDir: string;
  let store: DocStore;
  let bus: InProcessMessageBus;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'chained-stages-'));
    store = await openStore(undefined, { dataDir });
    bus = createInProcessBus({
      logger,
      validate: validateEvent,
      store,
      declareGroups: GROUPS,
      // Waits for a sender as long as a test needs (the default is a few milliseconds).
      foreground: new ForegroundWork(60_000, 5, 1),
    });
  });

  afterEach(async () => {
    await bus.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  function received(n: number): Promise<EventEnvelope> {
    return bus.publish('lead.received', { ...SAMPLE_EVENT_DATA['lead.received'], submissionId: sub(n) });
  }

  /** The stages and read models; `failOnce` names the submissions whose stage throws on its first call. */
  /**
   * `failOnce`: the submissions whose stage throws on its first call; `broken`: the submissions whose
   * enrichment throws while they are in it (up to `maxAttempts`, then dead-lettered).
   */
  async function startChain(
    failOnce: { capture?: string; enrich?: string; swallowed?: string } = {},
    { broken = new Set<string>(), maxAttempts = 5 } = {},
  ) {
    const outbox = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    const leads = store.collection<{ _id: string; stage: string }>('leads');
    const calls = { capture: new Map<string, number>(), enrich: new Map<string, number>() };
    const logged = { captured: [] as EventEnvelope[], enriched: [] as EventEnvelope[] };
    const streamed: EventEnvelope[] = [];
    const count = (calls: Map<string, number>, key: string) => {
      calls.set(key, (calls.get(key) ?? 0) + 1);
      return calls.get(key)!;
    };
    const retryAtOnce = { retryDelayMs: () => 0, maxAttempts };
    await bus.subscribe(
      { group: 'test.enrich', types: ['lead.captured'], chain: true, ...retryAtOnce },
      async (event) => {
        const { submissionId } = (event as EventOf<'lead.captured'>).data;
        const call = count(calls.enrich, submissionId);
        if (broken.has(submissionId)) throw new Error('enrichment broken (test)');
        if (failOnce.swallowed === submissionId && call === 1) {
          // A transaction of the handler's own fails half-way, and the handler carries on.
          await outbox
            .change(async (change) => {
              await change.emit(
                submissionId,
                'lead.enriched',
                { ...SAMPLE_EVENT_DATA['lead.enriched'] },
                { id: derivedEventId(event.id, ENRICHED_NS), causationId: event.id },
              );
              await change.collection('leads').updateOne({ _id: submissionId }, { $set: { stage: 'half' } });
              throw new Error('half-done (test)');
            })
            .catch(() => undefined);
          return;
        }
        const lead = await leads.findOne({ _id: submissionId });
        if (lead?.stage === 'enriched') return;
        await outbox.change(async (change) => {
          await change.emit(
            submissionId,
            'lead.enriched',
            { ...SAMPLE_EVENT_DATA['lead.enriched'] },
            { id: derivedEventId(event.id, ENRICHED_NS), causationId: event.id },
          );
        });
        // A write through the store's own collection: it joins the chain's transaction.
        await leads.updateOne({ _id: submissionId }, { $set: { stage: 'enriched' } });
        if (failOnce.enrich === submissionId && call === 1) throw new Error('enrichment failed (test)');
      },
    );
    await bus.subscribe({ group: 'test.captured.log', types: ['lead.captured'] }, async (event) => {
      logged.captured.push(event);
    });
    await bus.subscribe({ group: 'test.enriched.log', types: ['lead.enriched'] }, async (event) => {
      logged.enriched.push(event);
    });
    await bus.subscribe(
      { group: 'test.stream', types: ['lead.captured', 'lead.enriched'], broadcast: true },
      async (event) => {
        streamed.push(event);
      },
    );
    // The head last: its hops find every chained consumer subscribed (as once a process has started).
    await bus.subscribe(
      { group: 'test.capture', types: ['lead.received'], chain: true, ...retryAtOnce },
      async (event) => {
        const { submissionId } = (event as EventOf<'lead.received'>).data;
        const call = count(calls.capture, submissionId);
        // Through the store itself, not a transaction: a chained stage's reads see the batch's writes.
        if (await leads.findOne({ _id: submissionId })) return;
        await outbox.change(async (change) => {
          await change.collection('leads').insertOne({ _id: submissionId, stage: 'captured' });
          await change.emit(
            submissionId,
            'lead.captured',
            { ...SAMPLE_EVENT_DATA['lead.captured'], submissionId },
            { id: derivedEventId(event.id, CAPTURED_NS), causationId: event.id },
          );
        });
        if (failOnce.capture === submissionId && call === 1) throw new Error('capture failed (test)');
      },
    );
    return { leads, calls, logged, streamed };
  }

  /** Every queue empty and nothing handled or written: whatever was to be delivered has been. */
  async function settled(): Promise<void> {
    await waitFor('every queue settled', async () => {
      const stats = bus.stats();
      if (stats.handling > 0 || stats.recording > 0 || stats.retryTimers > 0) return false;
      const queues = await bus.queueStats!(GROUPS.map(({ group }) => group));
      return queues.every(({ ready, deadLetters }) => ready === 0 && deadLetters === 0);
    });
  }

  /** Counts the chained heads' transactions (each a savepoint of the store's group commit). */
  function countChains(): { chains: number } {
    const counter = { chains: 0 };
    const ambient = store.ambientTransaction!.bind(store);
    store.ambientTransaction = (work) => {
      counter.chains++;
      return ambient(work);
    };
    return counter;
  }

  it('runs pending first deliveries chained, each event once to the queued groups and the stream', async () => {
    const chains = countChains();
    for (let n = 0; n < 10; n++) await received(n);
    const { leads, logged, streamed } = await startChain();
    await waitFor('ten leads enriched', async () => (await leads.find({ stage: 'enriched' })).length === 10);
    await settled();
    // Ten leads, both stages each, chained: ten chains (the two stages in one transaction each).
    expect(chains.chains).toBe(10);
    expect(new Set(logged.captured.map((event) => event.id)).size).toBe(10);
    expect(logged.captured).toHaveLength(10);
    expect(logged.enriched).toHaveLength(10);
    expect(streamed.filter((event) => event.type === 'lead.captured')).toHaveLength(10);
    expect(streamed.filter((event) => event.type === 'lead.enriched')).toHaveLength(10);
    // Per lead, captured before enriched on the stream.
    for (const captured of streamed.filter((event) => event.type === 'lead.captured')) {
      const enriched = streamed.findIndex((event) => event.causationId === captured.id);
      expect(enriched).toBeGreaterThan(streamed.indexOf(captured));
    }
  });

  it('lets a sender go first: a head waits while a request is being answered', async () => {
    const answered = bus.foreground!.begin();
    await received(1);
    const { leads } = await startChain();
    await waitFor('the head waiting for the sender', () => bus.foreground!.waiting === 1);
    expect(await leads.countDocuments({})).toBe(0);
    answered();
    await waitFor('the lead enriched', async () => (await leads.find({ stage: 'enriched' })).length === 1);
    expect(bus.foreground!.waiting).toBe(0);
  });

  it('retries a lead whose chained stage throws alone, and commits the rest of its batch', async () => {
    const chains = countChains();
    for (let n = 0; n < 6; n++) await received(n);
    const { leads, calls, logged } = await startChain({ capture: sub(2), enrich: sub(4) });
    await waitFor('six leads enriched', async () => (await leads.find({ stage: 'enriched' })).length === 6);
    await settled();
    expect(chains.chains).toBeGreaterThan(0);
    // The failing head was rolled back (its lead and its event with it) and delivered again, alone.
    expect(calls.capture.get(sub(2))).toBe(2);
    // A failing later stage rolls its head's chain back: the chain runs again (the capture a second
    // time) with that stage's event queued as its retry.
    expect(calls.capture.get(sub(4))).toBe(2);
    expect(calls.enrich.get(sub(4))).toBe(2);
    for (const submission of [0, 1, 3, 5].map(sub)) {
      expect(calls.capture.get(submission)).toBe(1);
      expect(calls.enrich.get(submission)).toBe(1);
    }
    // The rolled-back attempts published nothing: every event reached its queued group once.
    expect(logged.captured).toHaveLength(6);
    expect(logged.enriched).toHaveLength(6);
    expect(new Set(logged.enriched.map((event) => event.id)).size).toBe(6);
  });

  it('fails a chained stage whose own transaction failed even if it carried on, and commits none of it', async () => {
    for (let n = 0; n < 3; n++) await received(n);
    const { leads, calls, logged } = await startChain({ swallowed: sub(1) });
    await waitFor('three leads enriched', async () => (await leads.find({ stage: 'enriched' })).length === 3);
    await settled();
    // Its transactions ran in place in the head's savepoint: the whole chain was rolled back and ran
    // again (the capture a second time) with the failed stage's event queued as its retry.
    expect(calls.enrich.get(sub(1))).toBe(2);
    expect(calls.capture.get(sub(1))).toBe(2);
    expect(logged.enriched).toHaveLength(3);
    expect(new Set(logged.enriched.map((event) => event.id)).size).toBe(3);
    expect((await leads.findOne({ _id: sub(1) }))?.stage).toBe('enriched');
  });

  it('tells a chained hop it is one (DeliveryContext.chained), and the head it is not', async () => {
    const contexts: { group: string; chained: boolean | undefined }[] = [];
    await bus.subscribe(
      { group: 'test.enrich', types: ['lead.captured'], chain: true },
      async (_event, context) => {
        contexts.push({ group: context.group, chained: context.chained });
      },
    );
    const outbox = new Outbox({ store, bus, logger, collection: 'test_outbox' });
    await bus.subscribe(
      { group: 'test.capture', types: ['lead.received'], chain: true },
      async (event, context) => {
        contexts.push({ group: context.group, chained: context.chained });
        await outbox.change(async (change) => {
          await change.emit(
            sub(1),
            'lead.captured',
            { ...SAMPLE_EVENT_DATA['lead.captured'], submissionId: sub(1) },
            {
              id: derivedEventId(event.id, CAPTURED_NS),
              causationId: event.id,
            },
          );
        });
      },
    );
    await received(1);
    await waitFor('both stages called', () => contexts.length === 2);
    expect(contexts).toEqual([
      { group: 'test.capture', chained: undefined },
      { group: 'test.enrich', chained: true },
    ]);
  });

  it('emits nothing again for a redelivered first event', async () => {
    const chains = countChains();
    const first = await received(1);
    const { leads, calls, logged, streamed } = await startChain();
    await waitFor(
      'the lead enriched',
      async () => (await leads.findOne({ _id: sub(1) }))?.stage === 'enriched',
    );
    await settled();
    expect(chains.chains).toBe(1);
    const streamedBefore = streamed.length;
    await bus.publishEnvelope(first);
    await waitFor('the redelivery handled', () => calls.capture.get(sub(1)) === 2);
    await settled();
    expect(logged.captured).toHaveLength(1);
    expect(logged.enriched).toHaveLength(1);
    expect(streamed).toHaveLength(streamedBefore);
    // The redelivery ran chained too.
    expect(chains.chains).toBe(2);
  });

  it('dead-letters a chained stage that keeps failing, and replays it into the chain', async () => {
    for (let n = 0; n < 3; n++) await received(n);
    const broken = new Set([sub(1)]);
    const { leads, calls, logged } = await startChain({}, { broken, maxAttempts: 2 });
    const [dead] = await waitFor('the dead letter', async () => {
      const letters = await bus.listDeadLetters('test.enrich');
      return letters.length > 0 && letters;
    });
    expect(dead!.event.type).toBe('lead.captured');
    expect(dead!.attempts).toBe(2);
    // The others went on; the failing lead was captured all the same (its capture committed).
    expect((await leads.findOne({ _id: sub(0) }))?.stage).toBe('enriched');
    expect((await leads.findOne({ _id: sub(1) }))?.stage).toBe('captured');
    broken.clear();
    expect(await bus.replayDeadLetters('test.enrich')).toBe(1);
    await waitFor(
      'the replayed lead enriched',
      async () => (await leads.findOne({ _id: sub(1) }))?.stage === 'enriched',
    );
    await settled();
    expect(calls.enrich.get(sub(1))).toBe(3);
    expect(logged.enriched).toHaveLength(3);
    expect(new Set(logged.enriched.map((event) => event.id)).size).toBe(3);
  });

  it("runs the warmers (the network) for a batch's heads before any of their transactions", async () => {
    for (let n = 0; n < 4; n++) await received(n);
    const order: string[] = [];
    bus.prepareChained!((head) => {
      order.push(`warm ${head.id}`);
      // A lookup that answers on a later turn of the event loop, as DNS does: no transaction may be
      // open while it waits.
      return new Promise((resolve) => setImmediate(resolve));
    });
    const ambient = store.ambientTransaction!.bind(store);
    store.ambientTransaction = (work) => {
      order.push('transaction');
      return ambient(work);
    };
    const { leads } = await startChain();
    await waitFor('four leads enriched', async () => (await leads.find({ stage: 'enriched' })).length === 4);
    await settled();
    expect(order.filter((step) => step.startsWith('warm'))).toHaveLength(4);
    expect(order.slice(0, 4).every((step) => step.startsWith('warm'))).toBe(true);
    expect(order.slice(4)).toEqual(['transaction', 'transaction', 'transaction', 'transaction']);
  });
});
