import { rm } from 'node:fs/promises';
import { createRabbitBus, type EventEnvelope, type MessageBus } from '@lead-capture/bus';
import { CONSUMER_GROUPS, validateEvent } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import type { OutboxEntry } from '@lead-capture/kit';
import { faultyTestBus, inProcessTestBus } from '@lead-capture/kit/testing';
import { AMQP_URL, faultyBus, requireService, startTcpProxy, uniquePrefix } from '@lead-capture/testing';
import { afterEach, describe, expect, it } from 'vitest';
// The bus package's own proxy: it cuts only this test's connections to the shared broker.
import { COLLECTIONS, type SubmissionDoc } from '../src/collections.js';
import {
  deleteRabbitTopology,
  faultyStore,
  freshStore,
  type Harness,
  RECEIVED_GROUP,
  silentLogger,
  startIntake,
  waitFor,
} from './harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started(options: Parameters<typeof startIntake>[0]): Promise<Harness> {
  const harness = await startIntake(options);
  cleanups.push(() => harness.close());
  return harness;
}

const FAST_RELAY = { OUTBOX_RELAY_INTERVAL_MS: '50', OUTBOX_RELAY_AFTER_MS: '150' };

function submissionIdsOf(events: readonly EventEnvelope[]): string[] {
  return events.map((event) => (event.data as { submissionId: string }).submissionId);
}

/** A fresh store this test owns (closed and removed afterwards), for intakes that share it or break it. */
async function ownedStore() {
  const { store, dataDir } = await freshStore();
  cleanups.push(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return store;
}

async function storedSubmissions(harness: Harness): Promise<SubmissionDoc[]> {
  return harness.store.collection<SubmissionDoc>(COLLECTIONS.submissions).find({});
}

function outboxOf(harness: Harness) {
  return harness.store.collection<OutboxEntry>(COLLECTIONS.outbox);
}

/** The intake's outbox empty and a marker received after it: see Harness.drained. */
async function settle(harness: Harness): Promise<void> {
  await harness.drained();
}

describe('durable accept: the outbox and its relay', () => {
  it('answers 200 while the bus is down, then the relay publishes each submission once, with its stored event id', async () => {
    const faulty = faultyTestBus(silentLogger);
    const intake = await started({ bus: faulty.make, env: FAST_RELAY });
    const { faults } = faulty;
    const source = await intake.addSource();

    faults.down = true;
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) => intake.post(source.token, { email: `outage${i}@example.com` })),
    );
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200]);
    // The relay has tried every entry and failed: still nothing delivered, everything waiting.
    await waitFor('a relay attempt on every outbox entry', async () =>
      (await outboxOf(intake).find({})).every((entry) => entry.attempts >= 1),
    );
    expect(intake.received).toHaveLength(0);
    expect((await storedSubmissions(intake)).map((doc) => doc.outcome)).toEqual(Array(5).fill('accepted'));
    expect(await outboxOf(intake).countDocuments({})).toBe(5);

    faults.down = false;
    await waitFor('the outbox drained', async () => (await outboxOf(intake).countDocuments({})) === 0);
    await settle(intake);
    expect(intake.received).toHaveLength(5);
    const stored = await storedSubmissions(intake);
    expect(new Set(submissionIdsOf(intake.received))).toEqual(new Set(stored.map((doc) => doc._id)));
    for (const doc of stored) {
      const event = intake.received.find((candidate) => candidate.id === doc.eventId);
      expect(event?.data).toMatchObject({ submissionId: doc._id });
      expect(doc.expiresAt).toBeInstanceOf(Date);
    }
  });

  it('two replicas relaying one outbox publish each submission once', async () => {
    const store = await ownedStore();
    const { bus, faults } = faultyBus(inProcessTestBus(silentLogger, store));
    cleanups.push(() => bus.close());
    const first = await started({ bus, store, env: FAST_RELAY });
    await started({ bus, store, env: FAST_RELAY, subscribeReceived: false });
    const source = await first.addSource();

    faults.down = true;
    for (let i = 0; i < 20; i++) {
      expect((await first.post(source.token, { email: `replica${i}@example.com` })).statusCode).toBe(200);
    }
    faults.down = false;
    await waitFor('the outbox drained', async () => (await outboxOf(first).countDocuments({})) === 0);
    await settle(first);
    expect(first.received).toHaveLength(20);
    expect(new Set(submissionIdsOf(first.received)).size).toBe(20);
  });

  it('answers 503 with Retry-After when the store cannot take the submission, and publishes nothing', async () => {
    const store = await ownedStore();
    const faults = faultyStore(store);
    // The bus on the store itself: its queue's writes are not the faults under test.
    const bus = () => inProcessTestBus(silentLogger, store);
    const intake = await started({ store: faults.store, bus, env: FAST_RELAY });
    const source = await intake.addSource();

    faults.fail(COLLECTIONS.submissions, 'insertOne');
    const refused = await intake.post(source.token, { email: 'later@example.com' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('10');
    expect(refused.json()).toEqual({ error: 'The submission could not be stored; retry later' });

    faults.fail(COLLECTIONS.sources, 'findOne');
    const lookupDown = await intake.post(source.token, { email: 'later@example.com' });
    expect(lookupDown.statusCode).toBe(503);
    expect(lookupDown.headers['retry-after']).toBe('10');
    expect(lookupDown.json()).toEqual({ error: 'Webhook temporarily unavailable; retry later' });

    faults.heal();
    expect((await intake.post(source.token, { email: 'later@example.com' })).statusCode).toBe(200);
    await waitFor('one lead.received', () => intake.received.length === 1);
    await settle(intake);
    expect(intake.received).toHaveLength(1);
  });

  it('keeps nothing of a delivery whose idempotency claim could not be written (503): the retry makes the only lead', async () => {
    const store = await ownedStore();
    const faults = faultyStore(store);
    const bus = () => inProcessTestBus(silentLogger, store);
    const intake = await started({ store: faults.store, bus, env: FAST_RELAY });
    const source = await intake.addSource();

    faults.fail(COLLECTIONS.dedupe, 'insertOne');
    expect((await intake.post(source.token, { email: 'retried@example.com' })).statusCode).toBe(503);
    // The claim, the submission and its event are one change: none of it was kept.
    expect(await storedSubmissions(intake)).toEqual([]);
    expect(await outboxOf(intake).countDocuments({})).toBe(0);
    faults.heal();
    expect((await intake.post(source.token, { email: 'retried@example.com' })).statusCode).toBe(200);
    expect((await intake.post(source.token, { email: 'retried@example.com' })).statusCode).toBe(200);

    await waitFor('one lead.received', () => intake.received.length === 1);
    await settle(intake);
    expect(intake.received).toHaveLength(1);
    const outcomes = (await storedSubmissions(intake)).map((doc) => doc.outcome).sort();
    expect(outcomes).toEqual(['accepted', 'duplicate_delivery']);
  });

  it('reads no idempotency claim for a new delivery; a repeat still finds its claim', async () => {
    const store = await ownedStore();
    const faults = faultyStore(store);
    const bus = () => inProcessTestBus(silentLogger, store);
    const intake = await started({ store: faults.store, bus, env: FAST_RELAY });
    const source = await intake.addSource();

    faults.fail(COLLECTIONS.dedupe, 'findOne');
    expect((await intake.post(source.token, { email: 'new@example.com' })).statusCode).toBe(200);
    faults.heal();
    expect((await intake.post(source.token, { email: 'new@example.com' })).statusCode).toBe(200);

    await waitFor('one lead.received', () => intake.received.length === 1);
    await settle(intake);
    expect(intake.received).toHaveLength(1);
    const outcomes = (await storedSubmissions(intake)).map((doc) => doc.outcome).sort();
    expect(outcomes).toEqual(['accepted', 'duplicate_delivery']);
  });
});

describe.runIf(rabbit)('over RabbitMQ', () => {
  async function rabbitBus(
    namePrefix: string,
    url = AMQP_URL,
    publishTimeoutMs?: number,
  ): Promise<MessageBus> {
    const bus = await createRabbitBus({
      url,
      namePrefix,
      logger: silentLogger,
      validate: validateEvent,
      declareGroups: CONSUMER_GROUPS,
      reconnect: { initialDelayMs: 50, maxDelayMs: 300 },
      ...(publishTimeoutMs === undefined ? {} : { publishTimeoutMs }),
    });
    cleanups.push(() => bus.close());
    return bus;
  }

  it('50 concurrent copies of one delivery publish exactly one lead.received', async () => {
    const namePrefix = uniquePrefix('intake');
    cleanups.push(() => deleteRabbitTopology(namePrefix, [RECEIVED_GROUP]));
    const intake = await started({ bus: await rabbitBus(namePrefix) });
    const source = await intake.addSource();

    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        intake.post(source.token, { email: 'rabbit-burst@example.com' }, { 'idempotency-key': 'form-42' }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(50).fill(200));
    await waitFor('the first lead.received', () => intake.received.length >= 1);
    await intake.drained();
    expect(intake.received).toHaveLength(1);
  });

  it('keeps answering 200 while its broker connection is cut, and publishes everything once it is back', async () => {
    const namePrefix = uniquePrefix('intake');
    cleanups.push(() => deleteRabbitTopology(namePrefix, [RECEIVED_GROUP]));
    const proxy = await startTcpProxy(AMQP_URL);
    cleanups.push(() => proxy.close());
    const observer = await rabbitBus(namePrefix);
    const received: EventEnvelope[] = [];
    await observer.subscribe({ group: RECEIVED_GROUP, types: ['lead.received'] }, async (event) => {
      received.push(event);
    });
    const intake = await started({
      bus: await rabbitBus(namePrefix, proxy.url, 300),
      env: { OUTBOX_RELAY_INTERVAL_MS: '100', OUTBOX_RELAY_AFTER_MS: '500' },
      subscribeReceived: false,
    });
    const source = await intake.addSource();

    proxy.refuse(true);
    proxy.dropAll();
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) => intake.post(source.token, { email: `cut${i}@example.com` })),
    );
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200]);
    // The relay has tried every entry over the cut connection and failed: nothing went out.
    await waitFor(
      'a failed relay attempt on every outbox entry',
      async () => (await outboxOf(intake).find({})).every((entry) => entry.attempts >= 1),
      15_000,
    );
    expect(received).toHaveLength(0);

    proxy.refuse(false);
    await waitFor(
      'five distinct submissions published',
      () => new Set(submissionIdsOf(received)).size === 5,
      15_000,
    );
    // Nothing left to relay, and a marker sent after it has arrived: no late duplicate can follow.
    await waitFor('the outbox emptied', async () => (await outboxOf(intake).countDocuments({})) === 0);
    const marker = await observer.publish('lead.received', SAMPLE_EVENT_DATA['lead.received']);
    await waitFor('the marker', () => received.some((event) => event.id === marker.id));
    received.splice(
      received.findIndex((event) => event.id === marker.id),
      1,
    );
    expect(new Set(submissionIdsOf(received)).size).toBe(5);
    // At least once: a relay publish whose 300 ms confirm timed out goes out again, but under the
    // same event id (consumers settle by id). One event id per submission, whatever arrived twice.
    const byEventId = new Map(received.map((event) => [event.id, event]));
    expect(
      [...byEventId.values()]
        .map((event) => (event.data as { fields: { email: string } }).fields.email)
        .sort(),
    ).toEqual([
      'cut0@example.com',
      'cut1@example.com',
      'cut2@example.com',
      'cut3@example.com',
      'cut4@example.com',
    ]);
  });
});
