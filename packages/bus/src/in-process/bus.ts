import { randomUUID } from 'node:crypto';
import type { EventEnvelope } from '@lead-capture/contracts';
import type { Collection } from '@lead-capture/docstore';
import {
  assertPublishable,
  buildEnvelope,
  envelopeProblem,
  errorMessage,
  parseMessage,
  type RetryPolicy,
  retryPolicy,
  truncate,
  validatePrefetch,
} from '../envelope.js';
import { UnroutableError } from '../errors.js';
import { invalidTopicPattern, topicMatches } from '../topic.js';
import type {
  BusLogger,
  DeadLetter,
  EventHandler,
  EventValidator,
  GroupDeclaration,
  MessageBus,
  PublishOptions,
  SubscribeOptions,
  Subscription,
} from '../types.js';
import { type DeliveryDoc, Journal } from './journal.js';

export interface InProcessBusOptions {
  logger: BusLogger;
  /** Checks event payloads on publish and at the consumer's edge (contracts' `validateEvent`). */
  validate?: EventValidator;
  /**
   * Makes the bus durable: pending deliveries, retries, dead letters and the known groups are kept
   * in this collection, and redelivered after a restart. Give each bus its own collection. Without
   * it everything is in memory (unit tests).
   */
  journal?: Collection;
  /** Durable groups that exist from the start (contracts' CONSUMER_GROUPS), subscribed or not. */
  declareGroups?: readonly GroupDeclaration[];
}

/**
 * The bus of the embedded mode, with RabbitMQ's semantics in one process: groups behave like
 * durable queues (a group that ever subscribed keeps receiving events while no handler is
 * attached), competing consumers within a group, retries with backoff, dead letters, broadcast.
 */
export function createInProcessBus(options: InProcessBusOptions): MessageBus {
  return new InProcessBus(options);
}

/** One delivery of one event to one group: the in-process counterpart of a queued message. */
interface Delivery {
  id: string;
  group: string;
  /** Queue position: deliveries are handed out in ascending order, like a queue's FIFO. */
  seq: number;
  /** The envelope as JSON, so every handler gets its own copy shaped exactly as over RabbitMQ. */
  body: string;
  attempt: number;
  availableAt: number;
  redelivered: boolean;
  lastError?: string;
}

interface DeadDelivery {
  delivery: Delivery;
  reason: string;
  attempts: number;
  deadAt: string;
}

class Consumer {
  readonly prefetch: number;
  readonly policy: RetryPolicy;
  readonly running = new Set<Promise<void>>();
  inFlight = 0;
  cancelled = false;

  constructor(
    readonly options: SubscribeOptions,
    readonly handler: EventHandler,
  ) {
    if (!options.group) throw new TypeError('subscribe: group is required');
    if (!Array.isArray(options.types) || options.types.length === 0) {
      throw new TypeError(`subscribe(${options.group}): types must list at least one event type`);
    }
    for (const type of options.types) {
      const problem = invalidTopicPattern(type);
      if (problem) throw new TypeError(`subscribe(${options.group}): ${problem}`);
    }
    this.prefetch = validatePrefetch(options.prefetch);
    this.policy = retryPolicy(options);
  }

  get hasCapacity(): boolean {
    return !this.cancelled && this.inFlight < this.prefetch;
  }

  track(task: Promise<void>): void {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

class Group {
  readonly ready: Delivery[] = [];
  readonly delayed = new Map<string, { delivery: Delivery; timer: NodeJS.Timeout }>();
  readonly dead: DeadDelivery[] = [];
  readonly consumers: Consumer[] = [];
  private next = 0;

  constructor(
    readonly name: string,
    public types: string[],
  ) {}

  matches(type: string): boolean {
    return this.types.some((pattern) => topicMatches(pattern, type));
  }

  enqueue(delivery: Delivery): void {
    // Concurrent publishes finish their journal writes in any order; the sequence keeps the queue FIFO.
    let index = this.ready.length;
    while (index > 0 && this.ready[index - 1]!.seq > delivery.seq) index--;
    this.ready.splice(index, 0, delivery);
  }

  /** Round robin over the consumers with a free prefetch slot. */
  pickConsumer(): Consumer | null {
    for (let i = 0; i < this.consumers.length; i++) {
      const consumer = this.consumers[(this.next + i) % this.consumers.length]!;
      if (consumer.hasCapacity) {
        this.next = (this.next + i + 1) % this.consumers.length;
        return consumer;
      }
    }
    return null;
  }
}

type State = 'running' | 'draining' | 'closed';

class InProcessBus implements MessageBus {
  readonly kind = 'in-process' as const;
  private readonly journal: Journal | null;
  private readonly groups = new Map<string, Group>();
  private readonly broadcasts = new Set<Consumer>();
  private readonly loaded: Promise<void>;
  private seq = 0;
  private state: State = 'running';
  private closing: Promise<void> | null = null;

  constructor(private readonly options: InProcessBusOptions) {
    this.journal = options.journal ? new Journal(options.journal) : null;
    this.loaded = this.load();
    this.loaded.catch(() => {});
  }

  private get logger(): BusLogger {
    return this.options.logger;
  }

  private get validate(): EventValidator | undefined {
    return this.options.validate;
  }

  // ---- publishing -------------------------------------------------------------------------------

  async publish<TData>(
    type: string,
    data: TData,
    options?: PublishOptions,
  ): Promise<EventEnvelope<string, TData>> {
    this.assertOpen();
    const envelope = buildEnvelope(type, data, options, this.validate);
    await this.route(envelope);
    return envelope;
  }

  async publishEnvelope(envelope: EventEnvelope): Promise<void> {
    this.assertOpen();
    assertPublishable(envelope, this.validate);
    await this.route(envelope);
  }

  /** Resolves once every matching group's delivery is in the journal (when there is one). */
  private async route(envelope: EventEnvelope): Promise<void> {
    const body = JSON.stringify(envelope);
    await this.loaded;
    const groups = [...this.groups.values()].filter((group) => group.matches(envelope.type));
    const broadcasts = [...this.broadcasts].filter((consumer) =>
      consumer.options.types.some((pattern) => topicMatches(pattern, envelope.type)),
    );
    if (groups.length === 0 && broadcasts.length === 0) {
      throw new UnroutableError(`Unroutable: no group or subscriber receives "${envelope.type}"`);
    }
    const now = Date.now();
    const deliveries = groups.map(
      (group): Delivery => ({
        id: randomUUID(),
        group: group.name,
        seq: this.nextSeq(),
        body,
        attempt: 1,
        availableAt: now,
        redelivered: false,
      }),
    );
    await this.journal?.add(deliveries.map((delivery) => toDoc(delivery)));
    // Never inside publish: handlers run on a later turn of the event loop, as they would over a broker.
    setImmediate(() => {
      for (const delivery of deliveries) {
        const group = this.groups.get(delivery.group)!;
        group.enqueue(delivery);
        this.pump(group);
      }
      for (const consumer of broadcasts) this.deliverBroadcast(consumer, body);
    });
  }

  private nextSeq(): number {
    this.seq = Math.max(this.seq + 1, Date.now() * 1000);
    return this.seq;
  }

  // ---- consuming --------------------------------------------------------------------------------

  async subscribe(options: SubscribeOptions, handler: EventHandler): Promise<Subscription> {
    if (this.state !== 'running') throw new Error('Message bus is closing');
    const consumer = new Consumer(options, handler);
    await this.loaded;
    if (options.broadcast) {
      this.broadcasts.add(consumer);
      return { cancel: () => this.cancelBroadcast(consumer) };
    }
    let group = this.groups.get(options.group);
    if (!group) {
      group = new Group(options.group, [...options.types]);
      this.groups.set(options.group, group);
    } else {
      group.types = [...options.types];
    }
    await this.journal?.saveGroup(group.name, group.types);
    group.consumers.push(consumer);
    const subscribed = group;
    setImmediate(() => this.pump(subscribed));
    return { cancel: () => this.cancel(subscribed, consumer) };
  }

  private pump(group: Group): void {
    while (group.ready.length > 0) {
      const consumer = group.pickConsumer();
      if (!consumer) return;
      const delivery = group.ready.shift()!;
      consumer.inFlight++;
      const handled = this.handle(group, consumer, delivery)
        .catch((error: unknown) =>
          this.logger.error({ group: group.name, err: error }, 'Delivery handling failed'),
        )
        .finally(() => {
          consumer.inFlight--;
          this.pump(group);
        });
      consumer.track(handled);
    }
  }

  private async handle(group: Group, consumer: Consumer, delivery: Delivery): Promise<void> {
    const parsed = parseMessage(delivery.body, this.validate);
    if ('problem' in parsed) {
      this.logger.warn({ group: group.name, reason: parsed.problem }, 'Dead-lettering an unreadable message');
      return this.deadLetter(group, delivery, parsed.problem);
    }
    const { envelope } = parsed;
    try {
      await consumer.handler(envelope, {
        attempt: delivery.attempt,
        group: group.name,
        redelivered: delivery.redelivered,
      });
    } catch (error) {
      const reason = errorMessage(error);
      const log = {
        group: group.name,
        eventId: envelope.id,
        type: envelope.type,
        attempt: delivery.attempt,
        err: error,
      };
      if (delivery.attempt >= consumer.policy.maxAttempts) {
        this.logger.error(log, 'Handler failed on its last attempt; dead-lettering the event');
        return this.deadLetter(group, delivery, reason);
      }
      const delayMs = consumer.policy.retryDelayMs(delivery.attempt);
      this.logger.warn({ ...log, retryInMs: delayMs }, 'Handler failed; retrying later');
      return this.retryLater(group, delivery, delayMs, reason);
    }
    await this.journalWrite('remove a handled delivery', () => this.journal?.remove(delivery.id));
  }

  private async retryLater(group: Group, delivery: Delivery, delayMs: number, reason: string): Promise<void> {
    // Like RabbitMQ's delay queue: the retry is a new message at the back of the group's queue.
    const retry: Delivery = {
      ...delivery,
      seq: this.nextSeq(),
      attempt: delivery.attempt + 1,
      availableAt: Date.now() + delayMs,
      redelivered: false,
      lastError: truncate(reason),
    };
    await this.journalWrite('record a retry', () => this.journal?.replace(toDoc(retry)));
    this.schedule(group, retry);
  }

  private schedule(group: Group, delivery: Delivery): void {
    const delayMs = delivery.availableAt - Date.now();
    if (delayMs <= 0) {
      group.enqueue(delivery);
      this.pump(group);
      return;
    }
    const timer = setTimeout(() => {
      group.delayed.delete(delivery.id);
      group.enqueue(delivery);
      this.pump(group);
    }, delayMs);
    // A waiting retry alone must not keep the process alive; the journal has it.
    timer.unref();
    group.delayed.set(delivery.id, { delivery, timer });
  }

  private async deadLetter(group: Group, delivery: Delivery, reason: string): Promise<void> {
    const dead: DeadDelivery = {
      delivery,
      reason: truncate(reason),
      attempts: delivery.attempt,
      deadAt: new Date().toISOString(),
    };
    await this.journalWrite('record a dead letter', () =>
      this.journal?.replace(
        toDoc(delivery, { reason: dead.reason, attempts: dead.attempts, deadAt: dead.deadAt }),
      ),
    );
    group.dead.push(dead);
  }

  /**
   * The handler's outcome stands even if the journal write fails (the memory state goes on); the
   * journal then still holds the older state, which after a restart means one more delivery, not a
   * lost one.
   */
  private async journalWrite(what: string, write: () => Promise<void> | undefined): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.logger.error({ err: error }, `Could not ${what} in the bus journal`);
    }
  }

  private deliverBroadcast(consumer: Consumer, body: string): void {
    if (consumer.cancelled) return;
    const task = (async () => {
      const parsed = parseMessage(body, this.validate);
      if ('problem' in parsed) {
        this.logger.warn(
          { group: consumer.options.group, reason: parsed.problem },
          'Dropping an unreadable broadcast',
        );
        return;
      }
      try {
        await consumer.handler(parsed.envelope, {
          attempt: 1,
          group: consumer.options.group,
          redelivered: false,
        });
      } catch (error) {
        this.logger.warn(
          { group: consumer.options.group, eventId: parsed.envelope.id, err: error },
          'Broadcast handler failed; broadcast events are not retried',
        );
      }
    })();
    consumer.track(task);
  }

  private async cancel(group: Group, consumer: Consumer): Promise<void> {
    consumer.cancelled = true;
    const index = group.consumers.indexOf(consumer);
    if (index >= 0) group.consumers.splice(index, 1);
    await consumer.drained();
  }

  private async cancelBroadcast(consumer: Consumer): Promise<void> {
    consumer.cancelled = true;
    this.broadcasts.delete(consumer);
    await consumer.drained();
  }

  // ---- dead letters -----------------------------------------------------------------------------

  async listDeadLetters(group: string, limit = 100): Promise<DeadLetter[]> {
    await this.loaded;
    const dead = this.groups.get(group)?.dead ?? [];
    return dead.slice(0, limit).map((letter) => toDeadLetter(group, letter));
  }

  async replayDeadLetters(group: string, ids?: string[]): Promise<number> {
    this.assertOpen();
    await this.loaded;
    const state = this.groups.get(group);
    if (!state) return 0;
    const wanted = ids ? new Set(ids) : null;
    const chosen = state.dead.filter((letter) => !wanted || wanted.has(eventId(letter.delivery)));
    for (const letter of chosen) {
      const replay: Delivery = {
        ...letter.delivery,
        seq: this.nextSeq(),
        attempt: 1,
        availableAt: Date.now(),
        redelivered: false,
      };
      delete replay.lastError;
      // Journal first: a replay that is not recorded must not leave the dead letters.
      await this.journal?.replace(toDoc(replay));
      state.dead.splice(state.dead.indexOf(letter), 1);
      state.enqueue(replay);
    }
    if (chosen.length > 0) setImmediate(() => this.pump(state));
    return chosen.length;
  }

  // ---- lifecycle --------------------------------------------------------------------------------

  async ping(): Promise<void> {
    if (this.state === 'closed') throw new Error('Message bus is closed');
    await this.loaded;
    await this.journal?.ping();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // Handlers still running may publish (the next event, a retry): keep routing until they settle.
    this.state = 'draining';
    const cancellations: Promise<void>[] = [];
    for (const group of this.groups.values()) {
      for (const consumer of [...group.consumers]) cancellations.push(this.cancel(group, consumer));
    }
    for (const consumer of [...this.broadcasts]) cancellations.push(this.cancelBroadcast(consumer));
    await Promise.all(cancellations);
    this.state = 'closed';
    for (const group of this.groups.values()) {
      for (const { timer } of group.delayed.values()) clearTimeout(timer);
      group.delayed.clear();
    }
  }

  private assertOpen(): void {
    if (this.state === 'closed') throw new Error('Message bus is closed');
  }

  /** Restores known groups, pending deliveries, waiting retries and dead letters from the journal. */
  private async load(): Promise<void> {
    if (!this.journal) {
      this.declareKnownGroups();
      return;
    }
    await this.journal.prepare();
    for (const record of await this.journal.groups()) {
      this.groups.set(record.group, new Group(record.group, record.types));
    }
    const dead: Array<{ group: Group; letter: DeadDelivery }> = [];
    for await (const doc of this.journal.deliveries()) {
      let group = this.groups.get(doc.group);
      if (!group) {
        group = new Group(doc.group, []);
        this.groups.set(doc.group, group);
      }
      this.seq = Math.max(this.seq, doc.seq);
      // The process may have stopped while a handler ran: this delivery may have been handled.
      const delivery = fromDoc(doc, true);
      if (doc.state === 'dead') {
        dead.push({
          group,
          letter: {
            delivery,
            reason: doc.reason ?? '',
            attempts: doc.attempts ?? doc.attempt,
            deadAt: doc.deadAt ?? '',
          },
        });
      } else {
        this.schedule(group, delivery);
      }
    }
    dead.sort((a, b) => a.letter.deadAt.localeCompare(b.letter.deadAt));
    for (const { group, letter } of dead) group.dead.push(letter);
    for (const group of this.declareKnownGroups()) await this.journal.saveGroup(group.name, group.types);
  }

  /** Adds the declared groups that are not known yet; returns them. */
  private declareKnownGroups(): Group[] {
    const added: Group[] = [];
    for (const { group, types } of this.options.declareGroups ?? []) {
      const known = this.groups.get(group);
      if (known && known.types.length > 0) continue;
      const declared = new Group(group, [...types]);
      this.groups.set(group, declared);
      added.push(declared);
    }
    return added;
  }
}

function toDoc(delivery: Delivery, dead?: { reason: string; attempts: number; deadAt: string }): DeliveryDoc {
  return {
    _id: delivery.id,
    kind: 'delivery',
    group: delivery.group,
    seq: delivery.seq,
    envelope: JSON.parse(delivery.body) as Record<string, unknown>,
    attempt: delivery.attempt,
    availableAt: delivery.availableAt,
    ...(delivery.lastError === undefined ? {} : { lastError: delivery.lastError }),
    ...(dead ? { state: 'dead', ...dead } : { state: 'pending' }),
  };
}

function fromDoc(doc: DeliveryDoc, redelivered: boolean): Delivery {
  return {
    id: doc._id,
    group: doc.group,
    seq: doc.seq,
    body: JSON.stringify(doc.envelope),
    attempt: doc.attempt,
    availableAt: doc.availableAt,
    redelivered,
    ...(doc.lastError === undefined ? {} : { lastError: doc.lastError }),
  };
}

function eventId(delivery: Delivery): string {
  const value: unknown = JSON.parse(delivery.body);
  return envelopeProblem(value) === null ? (value as EventEnvelope).id : '';
}

function toDeadLetter(group: string, letter: DeadDelivery): DeadLetter {
  const value: unknown = JSON.parse(letter.delivery.body);
  const common = { group, reason: letter.reason, attempts: letter.attempts, deadAt: letter.deadAt };
  if (envelopeProblem(value) === null) {
    const event = value as EventEnvelope;
    return { id: event.id, event, ...common };
  }
  const event: EventEnvelope = { id: '', type: '', occurredAt: letter.deadAt, correlationId: '', data: null };
  return { id: '', event, ...common, raw: letter.delivery.body };
}
