/**
 * The behaviour every MessageBus implementation must show, as one vitest suite. Each
 * implementation's test file calls `describeBusContract` with a factory for an isolated bus
 * (its own name prefix or its own memory). Not exported from the package index: test code only.
 */
import type { EventEnvelope } from '@lead-capture/contracts';
import { waitFor } from '@lead-capture/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidEventError, UnroutableError } from './errors.js';
import type { BusLogger, DeliveryContext, EventValidator, GroupDeclaration, MessageBus } from './types.js';

export interface BusHarness {
  readonly bus: MessageBus;
  /** Closes the bus and removes whatever it created (queues, exchange). */
  dispose(): Promise<void>;
}

/** Builds an isolated bus that checks payloads with `validate` and declares `declareGroups` up front. */
export type HarnessFactory = (
  validate: EventValidator,
  options?: { declareGroups?: readonly GroupDeclaration[] },
) => Promise<BusHarness>;

export const silentLogger: BusLogger = { debug() {}, info() {}, warn() {}, error() {} };

export { waitFor };

/** For fault timings only (pacing a stream so a connection cut lands mid-way); never to wait for an outcome. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise the test resolves itself: a handler parked on `wait` runs on only once `open()` is called. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

interface Delivery {
  event: EventEnvelope;
  context: DeliveryContext;
  at: number;
}

/**
 * The test events' schema. `x.strict` needs a numeric `n`; once `schema.tightened` is set it must
 * also be >= 0 — a schema that changed while a message waited in its queue.
 */
function testSchema() {
  const schema = { tightened: false };
  const validate: EventValidator = (type, data) => {
    if (type !== 'x.strict') return null;
    const n = (data as { n?: unknown } | null)?.n;
    if (typeof n !== 'number') return 'Invalid x.strict: n must be a number';
    if (schema.tightened && n < 0) return 'Invalid x.strict: n must be >= 0';
    return null;
  };
  return { schema, validate };
}

export function describeBusContract(
  name: string,
  factory: HarnessFactory,
  options: { skip?: boolean } = {},
): void {
  describe.skipIf(options.skip ?? false)(`MessageBus contract: ${name}`, () => {
    let harness: BusHarness | null = null;
    let schema: { tightened: boolean };

    async function open(declareGroups?: readonly GroupDeclaration[]): Promise<MessageBus> {
      const test = testSchema();
      schema = test.schema;
      harness = await factory(test.validate, { declareGroups });
      return harness.bus;
    }

    it('keeps events for a declared group until its first subscriber arrives', async () => {
      const bus = await open([{ group: 'declared.later', types: ['x.declared'] }]);
      await bus.publish('x.declared', { n: 1 });
      await bus.publish('x.declared', { n: 2 });
      await expect(bus.publish('x.nobody', { n: 3 })).rejects.toBeInstanceOf(UnroutableError);
      const seen: unknown[] = [];
      await bus.subscribe({ group: 'declared.later', types: ['x.declared'] }, async (event) => {
        seen.push(event.data);
      });
      await waitFor('both declared events', () => seen.length === 2);
      expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
    });

    afterEach(async () => {
      await harness?.dispose();
      harness = null;
    });

    it('publishes asynchronously: no handler runs before publish resolves', async () => {
      const bus = await open();
      let handledDuringPublish = false;
      let publishing = false;
      const seen: string[] = [];
      await bus.subscribe({ group: 'async', types: ['x.one'] }, async (event) => {
        if (publishing) handledDuringPublish = true;
        seen.push(event.id);
      });
      publishing = true;
      const published = bus.publish('x.one', { n: 1 });
      publishing = false;
      const envelope = await published;
      expect(handledDuringPublish).toBe(false);
      await waitFor('the delivery', () => seen.length === 1);
      expect(seen).toEqual([envelope.id]);
    });

    it('preserves per-event order and causation along a chain of two consumers', async () => {
      const bus = await open();
      const handledByA: EventEnvelope[] = [];
      const receivedByB: EventEnvelope[] = [];
      await bus.subscribe({ group: 'chain.b', types: ['x.two'], prefetch: 1 }, async (event) => {
        receivedByB.push(event);
      });
      await bus.subscribe({ group: 'chain.a', types: ['x.one'], prefetch: 1 }, async (event) => {
        handledByA.push(event);
        await bus.publish('x.two', event.data, { correlationId: event.correlationId, causationId: event.id });
      });

      const sent: EventEnvelope[] = [];
      for (let n = 0; n < 20; n++)
        sent.push(await bus.publish('x.one', { n }, { correlationId: `corr-${n}` }));

      await waitFor('20 events at the end of the chain', () => receivedByB.length === 20);
      expect(handledByA.map((event) => event.id)).toEqual(sent.map((event) => event.id));
      expect(receivedByB.map((event) => event.data)).toEqual(sent.map((event) => event.data));
      receivedByB.forEach((event, index) => {
        expect(event.causationId).toBe(sent[index]!.id);
        expect(event.correlationId).toBe(`corr-${index}`);
        expect(event.type).toBe('x.two');
      });
    });

    it('retries a failing handler with backoff, dead-letters it, lists and replays it; success settles once', async () => {
      const bus = await open();
      let failing = true;
      const deliveries: Delivery[] = [];
      const settled = new Map<string, number>();
      await bus.subscribe(
        { group: 'flaky', types: ['x.flaky'], maxAttempts: 3, retryDelayMs: (retry) => 50 * retry },
        async (event, context) => {
          deliveries.push({ event, context, at: Date.now() });
          if (failing) throw new Error(`downstream refused ${event.data && (event.data as { n: number }).n}`);
          settled.set(event.id, (settled.get(event.id) ?? 0) + 1);
        },
      );

      const first = await bus.publish('x.flaky', { n: 1 });
      const second = await bus.publish('x.flaky', { n: 2 });
      await waitFor('two dead letters', async () => (await bus.listDeadLetters('flaky')).length === 2);

      for (const event of [first, second]) {
        const attempts = deliveries.filter((delivery) => delivery.event.id === event.id);
        expect(attempts.map((delivery) => delivery.context.attempt)).toEqual([1, 2, 3]);
        expect(attempts.every((delivery) => delivery.context.group === 'flaky')).toBe(true);
        // Backoff: retry 1 waits >= 50 ms, retry 2 >= 100 ms (timer slack of a few ms allowed).
        expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(45);
        expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(95);
      }

      const letters = await bus.listDeadLetters('flaky');
      expect(letters.map((letter) => letter.id)).toEqual([first.id, second.id]);
      expect(letters[0]).toMatchObject({
        id: first.id,
        group: 'flaky',
        attempts: 3,
        reason: 'downstream refused 1',
        event: { id: first.id, type: 'x.flaky', data: { n: 1 } },
      });
      expect(Number.isNaN(Date.parse(letters[0]!.deadAt))).toBe(false);
      // Listing is not consuming: the letters are all still there, in the same order.
      expect((await bus.listDeadLetters('flaky')).map((letter) => letter.id)).toEqual([first.id, second.id]);
      expect(await bus.listDeadLetters('flaky', 1)).toHaveLength(1);

      failing = false;
      expect(await bus.replayDeadLetters('flaky', [second.id])).toBe(1);
      await waitFor('the replayed event handled', () => settled.get(second.id) === 1);
      const replayed = deliveries.filter((delivery) => delivery.event.id === second.id).at(-1)!;
      expect(replayed.context.attempt).toBe(1);
      expect((await bus.listDeadLetters('flaky')).map((letter) => letter.id)).toEqual([first.id]);

      expect(await bus.replayDeadLetters('flaky')).toBe(1);
      await waitFor('the other replayed event handled', () => settled.get(first.id) === 1);
      expect(await bus.listDeadLetters('flaky')).toEqual([]);
      expect(await bus.replayDeadLetters('flaky')).toBe(0);

      // A copy of a replayed event handled twice would come through the group before this marker.
      const marker = await bus.publish('x.flaky', { n: 0 });
      await waitFor('the marker handled', () => settled.get(marker.id) === 1);
      expect(Object.fromEntries(settled)).toEqual({ [first.id]: 1, [second.id]: 1, [marker.id]: 1 });
      expect(deliveries).toHaveLength(9);
    });

    it('rejects an invalid payload on publish', async () => {
      const bus = await open();
      await bus.subscribe({ group: 'strict', types: ['x.strict'] }, async () => {});
      await expect(bus.publish('x.strict', { n: 'one' })).rejects.toThrow(InvalidEventError);
      await expect(bus.publish('x.strict', { n: 'one' })).rejects.toThrow('n must be a number');
      await expect(bus.publish('x.*', { n: 1 })).rejects.toThrow(InvalidEventError);
    });

    it('dead-letters a payload that fails its schema at the consumer, without retries', async () => {
      const bus = await open();
      const handled: EventEnvelope[] = [];
      const handler = async (event: EventEnvelope) => {
        handled.push(event);
      };
      // The group exists (like a declared queue) while nobody consumes; the schema tightens before
      // the queued events are consumed.
      const first = await bus.subscribe({ group: 'strict', types: ['x.strict'], maxAttempts: 5 }, handler);
      await first.cancel();
      const bad = await bus.publish('x.strict', { n: -1 });
      const good = await bus.publish('x.strict', { n: 1 });
      schema.tightened = true;
      await bus.subscribe({ group: 'strict', types: ['x.strict'], maxAttempts: 5 }, handler);

      await waitFor('the valid event', () => handled.length === 1);
      await waitFor('the dead letter', async () => (await bus.listDeadLetters('strict')).length === 1);
      const [letter] = await bus.listDeadLetters('strict');
      expect(letter).toMatchObject({ id: bad.id, attempts: 1, event: { id: bad.id, data: { n: -1 } } });
      expect(letter!.reason).toContain('n must be >= 0');
      // Had the invalid event reached the handler after all, it would have come before this marker.
      const marker = await bus.publish('x.strict', { n: 2 });
      await waitFor('the marker', () => handled.some((event) => event.id === marker.id));
      expect(handled.map((event) => event.id)).toEqual([good.id, marker.id]);
    });

    it('shares a group between two consumers: each event handled once, both get some', async () => {
      const bus = await open();
      const byConsumer: [string[], string[]] = [[], []];
      // Each handler holds its event until both consumers have one: a busy consumer must not keep
      // the group's events from the other.
      const bothBusy = gate();
      for (const index of [0, 1] as const) {
        await bus.subscribe({ group: 'workers', types: ['x.work'], prefetch: 2 }, async (event) => {
          byConsumer[index].push(event.id);
          if (byConsumer[0].length > 0 && byConsumer[1].length > 0) bothBusy.open();
          await bothBusy.wait;
        });
      }
      const sent = await Promise.all(Array.from({ length: 40 }, (_, n) => bus.publish('x.work', { n })));
      await waitFor('40 events handled', () => byConsumer[0].length + byConsumer[1].length === 40);
      // A second delivery of any of the 40 would come before this marker.
      const marker = await bus.publish('x.work', { n: 40 });
      await waitFor('the marker', () => [...byConsumer[0], ...byConsumer[1]].includes(marker.id));
      const all = [...byConsumer[0], ...byConsumer[1]].filter((id) => id !== marker.id);
      expect(new Set(all).size).toBe(40);
      expect(all.sort()).toEqual(sent.map((event) => event.id).sort());
      expect(byConsumer[0].length).toBeGreaterThan(0);
      expect(byConsumer[1].length).toBeGreaterThan(0);
    });

    it('gives every broadcast subscription every event', async () => {
      const bus = await open();
      const received: [string[], string[]] = [[], []];
      for (const index of [0, 1] as const) {
        await bus.subscribe({ group: 'live', types: ['x.#'], broadcast: true }, async (event) => {
          received[index].push(event.id);
        });
      }
      const sent: string[] = [];
      for (let n = 0; n < 10; n++) sent.push((await bus.publish(n % 2 ? 'x.one' : 'x.two.three', { n })).id);
      await waitFor(
        'both broadcast subscribers',
        () => received[0].length === 10 && received[1].length === 10,
      );
      expect(received[0]).toEqual(sent);
      expect(received[1]).toEqual(sent);
    });

    it("matches topic patterns like RabbitMQ's topic exchange", async () => {
      const bus = await open();
      const got: Record<string, string[]> = { star: [], hash: [], exact: [] };
      await bus.subscribe({ group: 'star', types: ['lead.*.created'] }, async (event) => {
        got.star!.push(event.type);
      });
      await bus.subscribe({ group: 'hash', types: ['lead.#'] }, async (event) => {
        got.hash!.push(event.type);
      });
      await bus.subscribe({ group: 'exact', types: ['lead.created', 'note.added'] }, async (event) => {
        got.exact!.push(event.type);
      });
      for (const type of ['lead.created', 'lead.x.created', 'lead.x.y.created', 'note.added']) {
        await bus.publish(type, {});
      }
      await expect(bus.publish('other.thing', {})).rejects.toThrow(UnroutableError);
      await waitFor('the deliveries', () => got.star!.length + got.hash!.length + got.exact!.length === 6);
      // Markers for every group: a wrongly routed event would reach its group before them.
      await bus.publish('lead.end.created', {});
      await bus.publish('note.added', {});
      await waitFor(
        'the markers',
        () =>
          got.star!.includes('lead.end.created') &&
          got.hash!.includes('lead.end.created') &&
          got.exact!.filter((type) => type === 'note.added').length === 2,
      );
      expect(got.star).toEqual(['lead.x.created', 'lead.end.created']);
      expect(got.hash!.sort()).toEqual([
        'lead.created',
        'lead.end.created',
        'lead.x.created',
        'lead.x.y.created',
      ]);
      expect(got.exact!.sort()).toEqual(['lead.created', 'note.added', 'note.added']);
    });

    it('close() lets running handlers finish, then rejects further use', async () => {
      const bus = await open();
      let started = false;
      let finished = false;
      const release = gate();
      await bus.subscribe({ group: 'slow', types: ['x.slow'] }, async () => {
        started = true;
        await release.wait;
        finished = true;
      });
      await bus.publish('x.slow', {});
      await waitFor('the handler to start', () => started);
      await bus.ping();
      const closing = bus.close();
      const finishedWhenClosed = closing.then(() => finished);
      // While the handler runs, the closing bus keeps its connection: it still answers.
      await bus.ping();
      release.open();
      expect(await finishedWhenClosed).toBe(true);
      await expect(bus.ping()).rejects.toThrow();
      await expect(bus.publish('x.slow', {})).rejects.toThrow();
    });
  });
}
