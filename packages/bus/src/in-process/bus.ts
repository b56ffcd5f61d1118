import type { EventEnvelope } from '@lead-capture/contracts';
import type { DocStore, Transaction } from '@lead-capture/docstore';
import {
  assertPublishable,
  buildEnvelope,
  checkedSubscription,
  envelopeProblem,
  errorMessage,
  parseMessage,
  type RetryPolicy,
  truncate,
} from '../envelope.js';
import { UnroutableError } from '../errors.js';
import { DeliveryReporter } from '../observe.js';
import { topicMatches } from '../topic.js';
import type {
  BusLogger,
  BusObserver,
  DeadLetter,
  EventHandler,
  EventValidator,
  GroupDeclaration,
  MessageBus,
  PublishOptions,
  QueueStats,
  StagedPublish,
  SubscribeOptions,
  Subscription,
  TransactionalPublisher,
} from '../types.js';
import { type ChainedConsumer, type ChainHost, ChainRunner, MAX_CHAIN_BATCH } from './chain-runner.js';
import { type DeliveryDoc, deliveryId } from './deliveries.js';
import { SqlQueueStore } from './sql-queue.js';

export interface InProcessBusOptions {
  logger: BusLogger;
  /** Checks event payloads on publish and at the consumer's edge (contracts' `validateEvent`). */
  validate?: EventValidator;
  /**
   * The embedded store the queues live in (pending deliveries, retries, dead letters and the known
   * groups, in SQL tables of their own): what is pending after a restart is redelivered, and a
   * publish inside one of the store's transactions is queued in the same commit (see
   * MessageBus.transactionalPublisher). Only the embedded store has them: MongoDB goes with RabbitMQ.
   */
  store: DocStore;
  /** Names the queue tables (`q:<queues>:deliveries`, …): give each bus on one store its own. Default 'bus_journal'. */
  queues?: string;
  /** Durable groups that exist from the start (contracts' CONSUMER_GROUPS), subscribed or not. */
  declareGroups?: readonly GroupDeclaration[];
  /**
   * Events a broadcast subscription may have waiting for its handler (beyond its prefetch) before
   * the oldest are dropped, as a RabbitMQ queue with `x-max-length` drops its head. Default 10,000.
   */
  broadcastBacklogLimit?: number;
  /** Told how every delivery of a durable group went (metrics). */
  observer?: BusObserver;
}

/** What the bus holds in memory; none of it grows with the number of queued events. */
export interface InProcessBusStats {
  /** Known groups (durable queues). */
  groups: number;
  /** Handlers of groups running now (at most the sum of the subscriptions' prefetch). */
  handling: number;
  /** Handled deliveries whose outcome (removal, retry, dead letter) is being written. */
  recording: number;
  /**
   * Deliveries the bus tracks by id and sequence: being published, handled, or their outcome being
   * written. Everything else that is queued is only in the journal.
   */
  tracked: number;
  /** Timers armed for the earliest waiting retry: at most one per group. */
  retryTimers: number;
  /** Broadcast events waiting for a busy broadcast handler (bounded by `broadcastBacklogLimit`). */
  broadcastBuffered: number;
  /** Broadcast events dropped because a broadcast subscription fell too far behind. */
  broadcastDropped: number;
  /** Reads of the queues, and the deliveries they returned. */
  fetches: number;
  fetched: number;
}

export interface InProcessMessageBus<Group extends string = string> extends MessageBus<Group> {
  /** Counters of what the bus holds in memory (tests, diagnostics). */
  stats(): InProcessBusStats;
}

/**
 * The bus of the embedded mode, with RabbitMQ's semantics in one process: groups behave like
 * durable queues (a group that ever subscribed keeps receiving events while no handler is
 * attached), competing consumers within a group, retries with backoff, dead letters, broadcast.
 * The queues are in the journal; the bus fetches from it what its handlers are about to handle.
 */
export function createInProcessBus<Group extends string = string>(
  options: InProcessBusOptions,
): InProcessMessageBus<Group> {
  return new InProcessBus(options);
}

const DEFAULT_BROADCAST_BACKLOG_LIMIT = 10_000;
/**
 * Handled deliveries whose outcome may be being written at once, per unit of prefetch. Outcomes are
 * written in group commits: letting a few batches overlap keeps the handlers busy meanwhile (about
 * twice the throughput of 1 on the SQLite store), and still bounds what a group holds.
 */
const RECORDING_PER_PREFETCH = 4;
/** Dead letters read per page while replaying. */
const REPLAY_PAGE = 500;

class Consumer {
  readonly prefetch: number;
  readonly policy: RetryPolicy;
  readonly running = new Set<Promise<void>>();
  inFlight = 0;
  cancelled = false;
  /** Broadcast only: bodies waiting for a free slot, oldest first from `head`. */
  backlog: string[] = [];
  head = 0;

  constructor(
    readonly options: SubscribeOptions,
    readonly handler: EventHandler,
  ) {
    ({ prefetch: this.prefetch, policy: this.policy } = checkedSubscription(options));
  }

  get hasCapacity(): boolean {
    return !this.cancelled && this.inFlight < this.prefetch;
  }

  get freeSlots(): number {
    return this.cancelled ? 0 : Math.max(0, this.prefetch - this.inFlight);
  }

  get buffered(): number {
    return this.backlog.length - this.head;
  }

  matches(type: string): boolean {
    return this.options.types.some((pattern) => topicMatches(pattern, type));
  }

  track(task: Promise<void>): void {
    this.running.add(task);
    void task.finally(() => this.running.delete(task));
  }

  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

/**
 * A group's view of its queue in the journal. Deliveries are fetched in `seq` order after `cursor`;
 * `held` are those not to be handed out (being published, handled, or their outcome being written).
 * A delivery that becomes pending at or before the cursor (a publish that finished after later ones, a
 * retry whose time came, a replay) moves the cursor back (`rewind`); held ones are skipped.
 */
class Group {
  readonly consumers: Consumer[] = [];
  readonly held = new Map<string, number>();
  /** Ids released while a fetch was under way: its answer may predate their new state. */
  readonly releasedDuringFetch = new Set<string>();
  cursor = 0;
  /** Handled deliveries whose outcome is being written to the journal. */
  recording = 0;
  rewind = Number.POSITIVE_INFINITY;
  fetching = false;
  again = false;
  wakeScheduled = false;
  dueTimer: NodeJS.Timeout | null = null;
  dueAt = Number.POSITIVE_INFINITY;
  private next = 0;

  constructor(
    readonly name: string,
    public types: string[],
  ) {}

  matches(type: string): boolean {
    return this.types.some((pattern) => topicMatches(pattern, type));
  }

  /**
   * Deliveries that may be handed out now: the consumers' free prefetch slots, while fewer than
   * RECORDING_PER_PREFETCH times the prefetch have their outcome being written. A group thus holds at
   * most (1 + RECORDING_PER_PREFETCH) times its prefetch, plus the publishes under way.
   */
  get freeSlots(): number {
    let free = 0;
    let prefetch = 0;
    for (const consumer of this.consumers) {
      free += consumer.freeSlots;
      if (!consumer.cancelled) prefetch += consumer.prefetch;
    }
    return Math.max(0, Math.min(free, RECORDING_PER_PREFETCH * prefetch - this.recording));
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

  /** The delivery is no longer held; `pendingSeq`: it is (again) pending at that position. */
  release(id: string, pendingSeq: number | null): void {
    this.held.delete(id);
    if (this.fetching) this.releasedDuringFetch.add(id);
    if (pendingSeq !== null) this.rewind = Math.min(this.rewind, pendingSeq - 1);
  }
}

/** What the chain runner calls of a chained subscriber. */
function chainedOf(consumer: Consumer): ChainedConsumer {
  const { handler, policy } = consumer;
  const batch = consumer.options.chainBatch;
  return batch ? { handler, policy, batch } : { handler, policy };
}

/** First deliveries of one fetch bound for chained handlers, run in batches of at most MAX_CHAIN_BATCH. */
class ChainBatch {
  private docs: DeliveryDoc[] = [];
  private consumer: Consumer | null = null;

  constructor(
    private readonly group: Group,
    private readonly run: (consumer: Consumer, docs: DeliveryDoc[]) => void,
  ) {}

  add(consumer: Consumer, doc: DeliveryDoc): void {
    // A slot is taken now, so the round robin and the free slots see it.
    consumer.inFlight++;
    this.group.held.set(doc._id, doc.seq);
    if (this.consumer && this.consumer !== consumer) this.flush();
    this.consumer = consumer;
    this.docs.push(doc);
    if (this.docs.length >= MAX_CHAIN_BATCH) this.flush();
  }

  flush(): void {
    const { consumer, docs } = this;
    this.docs = [];
    this.consumer = null;
    if (!consumer || docs.length === 0) return;
    consumer.inFlight -= docs.length;
    this.run(consumer, docs);
  }
}

type Outcome =
  | { kind: 'done' }
  | { kind: 'retry'; reason: string; delayMs: number }
  | { kind: 'dead'; reason: string };

type State = 'running' | 'draining' | 'closed';

class InProcessBus implements InProcessMessageBus<string> {
  readonly kind = 'in-process' as const;
  private readonly store: SqlQueueStore;
  private readonly groups = new Map<string, Group>();
  private readonly broadcasts = new Set<Consumer>();
  private readonly routes = new Map<string, Group[]>();
  private readonly loaded: Promise<void>;
  /** `loaded` has resolved: a publish inside a transaction must not wait for it (see stage). */
  private isLoaded = false;
  /** Fetches and retry promotions under way, awaited by close() before the store may close. */
  private readonly background = new Set<Promise<void>>();
  private readonly broadcastBacklogLimit: number;
  private seq = 0;
  /** The highest sequence in the journal at start: deliveries up to it may have been handled before. */
  private bootSeq = 0;
  private state: State = 'running';
  private closing: Promise<void> | null = null;
  private counters = { fetches: 0, fetched: 0, broadcastDropped: 0 };
  /** Handled deliveries whose removal is about to be written, together. */
  private removals: { ids: string[]; done: Promise<void> } | null = null;
  private readonly reporter: DeliveryReporter;
  /** Runs chained handlers (SubscribeOptions.chain) where the store can: the embedded one. */
  private readonly chain: ChainRunner | null;

  constructor(private readonly options: InProcessBusOptions) {
    this.store = queueStoreOf(options);
    this.reporter = new DeliveryReporter(options.observer, options.logger);
    this.chain = options.store.ambientTransaction ? new ChainRunner(this.chainHost()) : null;
    this.broadcastBacklogLimit = options.broadcastBacklogLimit ?? DEFAULT_BROADCAST_BACKLOG_LIMIT;
    if (!Number.isInteger(this.broadcastBacklogLimit) || this.broadcastBacklogLimit < 0) {
      throw new RangeError(
        `broadcastBacklogLimit must be a non-negative integer, got ${this.broadcastBacklogLimit}`,
      );
    }
    this.loaded = this.load();
    this.loaded.then(
      () => {
        this.isLoaded = true;
      },
      () => {},
    );
  }

  private get logger(): BusLogger {
    return this.options.logger;
  }

  private get validate(): EventValidator | undefined {
    return this.options.validate;
  }

  stats(): InProcessBusStats {
    let handling = 0;
    let recording = 0;
    let tracked = 0;
    let retryTimers = 0;
    for (const group of this.groups.values()) {
      for (const consumer of group.consumers) handling += consumer.inFlight;
      recording += group.recording;
      tracked += group.held.size;
      if (group.dueTimer) retryTimers++;
    }
    let broadcastBuffered = 0;
    for (const consumer of this.broadcasts) broadcastBuffered += consumer.buffered;
    return {
      groups: this.groups.size,
      handling,
      recording,
      tracked,
      retryTimers,
      broadcastBuffered,
      broadcastDropped: this.counters.broadcastDropped,
      fetches: this.counters.fetches,
      fetched: this.counters.fetched,
    };
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

  /** Resolves once every matching group's delivery is in the journal, in one write. */
  private async route(envelope: EventEnvelope): Promise<void> {
    await this.loaded;
    // Inside a chained handler the deliveries join its transaction: released once it commits.
    if (await this.chain?.publishInChain(envelope)) return;
    const routed = this.deliveriesOf(envelope);
    if (!routed) throw new UnroutableError(`Unroutable: no group or subscriber receives "${envelope.type}"`);
    try {
      await this.store.insert(routed.deliveries);
    } finally {
      routed.settle(true);
    }
  }

  transactionalPublisher(store: DocStore): TransactionalPublisher | undefined {
    if (store !== this.options.store) return undefined;
    return {
      ready: () => this.loaded,
      stage: async (tx: Transaction, envelope: EventEnvelope): Promise<StagedPublish | null> => {
        assertPublishable(envelope, this.validate);
        // Loading reads the journal through the store, which waits for this very transaction; a
        // closing bus takes nothing more. Either way the outbox keeps the event for its relay.
        if (!this.isLoaded || this.state !== 'running') return null;
        // Inside a chained handler: chained consumers get the event as a call, the others in this commit.
        const chained = await this.chain?.stage(tx, envelope);
        if (chained) return chained;
        const routed = this.deliveriesOf(envelope);
        if (!routed) return null;
        try {
          await this.store.insert(routed.deliveries, tx);
        } catch (error) {
          routed.settle(false);
          throw error;
        }
        return { committed: () => routed.settle(true), aborted: () => routed.settle(false) };
      },
    };
  }

  /**
   * The deliveries of an envelope to its groups, held (a consumer reading the journal skips them)
   * until `settle`: `written` once they are durable, which also hands the envelope to the matching
   * broadcast subscribers. Null when neither a group nor a broadcast subscriber receives its type.
   */
  private deliveriesOf(
    envelope: EventEnvelope,
    only?: readonly string[],
  ): { deliveries: DeliveryDoc[]; settle: (written: boolean) => void } | null {
    const all = this.groupsFor(envelope.type);
    const groups = only ? all.filter((group) => only.includes(group.name)) : all;
    const broadcasts = [...this.broadcasts].filter((consumer) => consumer.matches(envelope.type));
    if (groups.length === 0 && broadcasts.length === 0) return null;
    const body = JSON.stringify(envelope);
    const now = Date.now();
    const deliveries = groups.map((group): DeliveryDoc => {
      const seq = this.nextSeq();
      return {
        _id: deliveryId(seq),
        kind: 'delivery',
        group: group.name,
        seq,
        state: 'pending',
        body,
        attempt: 1,
        availableAt: now,
      };
    });
    groups.forEach((group, index) => {
      group.held.set(deliveries[index]!._id, deliveries[index]!.seq);
    });
    const settle = (written: boolean) => {
      groups.forEach((group, index) => {
        const delivery = deliveries[index]!;
        group.release(delivery._id, written ? delivery.seq : null);
        // Never inside publish: handlers run on a later turn of the event loop, as over a broker.
        if (written) this.wakeSoon(group);
      });
      if (written && broadcasts.length > 0) {
        setImmediate(() => {
          for (const consumer of broadcasts) this.deliverBroadcast(consumer, body);
        });
      }
    };
    return { deliveries, settle };
  }

  /** The groups receiving a type; cached per type until a group is added or changes its types. */
  private groupsFor(type: string): Group[] {
    let groups = this.routes.get(type);
    if (!groups) {
      groups = [...this.groups.values()].filter((group) => group.matches(type));
      if (this.routes.size >= 1000) this.routes.clear();
      this.routes.set(type, groups);
    }
    return groups;
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
    this.routes.clear();
    await this.store.saveGroup(group.name, group.types);
    group.consumers.push(consumer);
    this.wakeSoon(group);
    const subscribed = group;
    return { cancel: () => this.cancel(subscribed, consumer) };
  }

  private wakeSoon(group: Group): void {
    if (group.wakeScheduled || group.consumers.length === 0) return;
    group.wakeScheduled = true;
    setImmediate(() => {
      group.wakeScheduled = false;
      this.pump(group);
    });
  }

  /** Fills the group's free prefetch slots from the journal; one fetch at a time per group. */
  private pump(group: Group): void {
    if (group.fetching) {
      group.again = true;
      return;
    }
    if (this.state === 'closed' || group.freeSlots === 0) return;
    group.fetching = true;
    const task = this.fill(group)
      .catch((error: unknown) =>
        this.logger.error({ group: group.name, err: error }, 'Could not read the bus journal'),
      )
      .finally(() => {
        group.fetching = false;
        group.releasedDuringFetch.clear();
        this.background.delete(task);
        if (group.again) this.pump(group);
      });
    this.background.add(task);
  }

  private async fill(group: Group): Promise<void> {
    for (;;) {
      group.again = false;
      group.releasedDuringFetch.clear();
      if (group.rewind < group.cursor) group.cursor = group.rewind;
      group.rewind = Number.POSITIVE_INFINITY;
      const free = group.freeSlots;
      if (free === 0 || this.state === 'closed') return;
      let heldAhead = 0;
      for (const seq of group.held.values()) if (seq > group.cursor) heldAhead++;
      const limit = free + heldAhead;
      const docs = await this.store.pending(group.name, group.cursor, limit);
      this.counters.fetches++;
      this.counters.fetched += docs.length;
      let stale = false;
      const batch = new ChainBatch(group, (consumer, batched) =>
        this.dispatchChain(group, consumer, batched),
      );
      let noConsumer = false;
      for (const doc of docs) {
        if (group.releasedDuringFetch.has(doc._id)) {
          // Its outcome was written while this read ran: read it again rather than trust this copy.
          group.rewind = Math.min(group.rewind, doc.seq - 1);
          stale = true;
          continue;
        }
        if (group.held.has(doc._id)) {
          group.cursor = doc.seq;
          continue;
        }
        const consumer = group.pickConsumer();
        if (!consumer) {
          noConsumer = true;
          break;
        }
        group.cursor = doc.seq;
        // A first delivery to a chained handler joins the batch; retries take the ordinary path.
        if (this.chain && consumer.options.chain && doc.attempt === 1) batch.add(consumer, doc);
        else this.dispatch(group, consumer, doc);
      }
      batch.flush();
      if (noConsumer) return;
      if (docs.length < limit && !stale && !group.again && group.rewind === Number.POSITIVE_INFINITY) return;
    }
  }

  private dispatch(group: Group, consumer: Consumer, doc: DeliveryDoc): void {
    group.held.set(doc._id, doc.seq);
    consumer.inFlight++;
    consumer.track(this.deliver(group, consumer, doc));
  }

  /** Runs first deliveries as one chained batch (ChainRunner): held, in the consumer's slots, till committed. */
  private dispatchChain(group: Group, consumer: Consumer, docs: DeliveryDoc[]): void {
    for (const doc of docs) group.held.set(doc._id, doc.seq);
    consumer.inFlight += docs.length;
    const handler: ChainedConsumer = chainedOf(consumer);
    const task = this.chain!.runBatch(group.name, handler, docs)
      .catch((error: unknown) => {
        this.logger.error(
          { group: group.name, err: error },
          'A chained batch failed; its deliveries stay queued',
        );
        for (const doc of docs) group.release(doc._id, doc.seq);
      })
      .finally(() => {
        consumer.inFlight -= docs.length;
        this.pump(group);
      });
    consumer.track(task);
  }

  /** What the chain runner sees of this bus. */
  private chainHost(): ChainHost {
    return {
      store: this.options.store as ChainHost['store'],
      queue: this.store,
      logger: this.options.logger,
      validate: this.options.validate,
      reporter: this.reporter,
      groupsFor: (type) => this.groupsFor(type).map((group) => group.name),
      chainedConsumer: (name) => this.chainedConsumer(name),
      route: (envelope, groups) => this.deliveriesOf(envelope, groups),
      nextSeq: () => this.nextSeq(),
      release: (name, id, pendingSeq) => {
        const group = this.groups.get(name);
        if (!group) return;
        group.release(id, pendingSeq);
        if (pendingSeq !== null) this.wakeSoon(group);
      },
      retryAt: (name, at) => {
        const group = this.groups.get(name);
        if (group) this.scheduleDue(group, at);
      },
    };
  }

  /** The handler a delivery to this group is chained to: a live subscriber of this process that chains. */
  private chainedConsumer(name: string): ChainedConsumer | null {
    if (this.state !== 'running') return null;
    const consumer = this.groups
      .get(name)
      ?.consumers.find((candidate) => !candidate.cancelled && candidate.options.chain);
    return consumer ? chainedOf(consumer) : null;
  }

  prepareChained(warm: (head: EventEnvelope) => Promise<void>): void {
    this.chain?.addWarmer(warm);
  }

  private async deliver(group: Group, consumer: Consumer, doc: DeliveryDoc): Promise<void> {
    let outcome: Outcome;
    try {
      outcome = await this.runHandler(group, consumer, doc);
    } finally {
      consumer.inFlight--;
      group.recording++;
    }
    // The slot is free for the next delivery while this one's outcome is written.
    this.pump(group);
    let pendingSeq: number | null = null;
    try {
      pendingSeq = await this.record(group, doc, outcome);
    } catch (error) {
      // The journal still holds the delivery as it was: it is redelivered after a restart, not lost.
      this.logger.error({ group: group.name, err: error }, 'Could not record a delivery in the bus journal');
    } finally {
      group.recording--;
    }
    group.release(doc._id, pendingSeq);
    this.pump(group);
  }

  private async runHandler(group: Group, consumer: Consumer, doc: DeliveryDoc): Promise<Outcome> {
    const parsed = parseMessage(doc.body, this.validate);
    if ('problem' in parsed) {
      this.logger.warn({ group: group.name, reason: parsed.problem }, 'Dead-lettering an unreadable message');
      this.reporter.unreadable(group.name, doc.attempt);
      return { kind: 'dead', reason: parsed.problem };
    }
    const { envelope } = parsed;
    const settled = this.reporter.started(group.name, envelope, doc.attempt);
    const outcome = await this.handle(consumer, group, doc, envelope);
    settled(outcome.kind === 'done' ? 'handled' : outcome.kind === 'retry' ? 'retried' : 'dead-lettered');
    return outcome;
  }

  private async handle(
    consumer: Consumer,
    group: Group,
    doc: DeliveryDoc,
    envelope: EventEnvelope,
  ): Promise<Outcome> {
    try {
      await consumer.handler(envelope, {
        attempt: doc.attempt,
        group: group.name,
        redelivered: doc.seq <= this.bootSeq,
      });
      return { kind: 'done' };
    } catch (error) {
      const reason = errorMessage(error);
      const log = {
        group: group.name,
        eventId: envelope.id,
        type: envelope.type,
        attempt: doc.attempt,
        err: error,
      };
      if (doc.attempt >= consumer.policy.maxAttempts) {
        this.logger.error(log, 'Handler failed on its last attempt; dead-lettering the event');
        return { kind: 'dead', reason };
      }
      let delayMs: number;
      try {
        delayMs = consumer.policy.retryDelayMs(doc.attempt);
      } catch (policyError) {
        return { kind: 'dead', reason: `${reason} (no retry: ${errorMessage(policyError)})` };
      }
      this.logger.warn({ ...log, retryInMs: delayMs }, 'Handler failed; retrying later');
      return { kind: 'retry', reason, delayMs };
    }
  }

  /** Writes the outcome; returns the delivery's new position when it is pending again at once. */
  private async record(group: Group, doc: DeliveryDoc, outcome: Outcome): Promise<number | null> {
    if (outcome.kind === 'done') {
      await this.removeHandled(doc._id);
      return null;
    }
    if (outcome.kind === 'dead') {
      const deadAt = new Date().toISOString();
      await this.store.move(doc._id, 'pending', {
        seq: this.nextSeq(),
        state: 'dead',
        attempt: doc.attempt,
        availableAt: doc.availableAt,
        reason: truncate(outcome.reason),
        attempts: doc.attempt,
        deadAt,
      });
      return null;
    }
    // Like RabbitMQ's delay queue: the retry is a new message at the back of the group's queue.
    const seq = this.nextSeq();
    const availableAt = Date.now() + outcome.delayMs;
    const state = outcome.delayMs > 0 ? 'delayed' : 'pending';
    await this.store.move(doc._id, 'pending', {
      seq,
      state,
      attempt: doc.attempt + 1,
      availableAt,
      lastError: truncate(outcome.reason),
    });
    if (state === 'pending') return seq;
    this.scheduleDue(group, availableAt);
    return null;
  }

  /** Removes a handled delivery; those handled together (one microtask flush) share one write. */
  private removeHandled(id: string): Promise<void> {
    if (!this.removals) {
      const ids: string[] = [];
      const done = new Promise<void>((resolve, reject) => {
        queueMicrotask(() => {
          this.removals = null;
          this.store.remove(ids).then(resolve, reject);
        });
      });
      this.removals = { ids, done };
    }
    this.removals.ids.push(id);
    return this.removals.done;
  }

  /** Arms the group's one retry timer for `at`, unless it fires earlier already. */
  private scheduleDue(group: Group, at: number): void {
    if (this.state === 'closed') return;
    if (group.dueTimer && group.dueAt <= at) return;
    if (group.dueTimer) clearTimeout(group.dueTimer);
    group.dueAt = at;
    group.dueTimer = setTimeout(
      () => {
        group.dueTimer = null;
        group.dueAt = Number.POSITIVE_INFINITY;
        const task = this.promoteDue(group)
          .catch((error: unknown) =>
            this.logger.error(
              { group: group.name, err: error },
              'Could not move due retries in the bus journal',
            ),
          )
          .finally(() => this.background.delete(task));
        this.background.add(task);
      },
      Math.max(0, at - Date.now()),
    );
    // A waiting retry alone must not keep the process alive; the journal has it.
    group.dueTimer.unref();
  }

  private async promoteDue(group: Group): Promise<void> {
    if (this.state === 'closed') return;
    const promoted = await this.store.promoteDue(group.name, Date.now());
    if (promoted > 0) {
      // Their positions are where they failed: read the queue from its start again (held ones skipped).
      group.rewind = 0;
      this.pump(group);
    }
    const next = await this.store.nextDueAt(group.name);
    if (next !== null) this.scheduleDue(group, next);
  }

  private deliverBroadcast(consumer: Consumer, body: string): void {
    if (consumer.cancelled) return;
    if (consumer.inFlight < consumer.prefetch) {
      this.runBroadcast(consumer, body);
      return;
    }
    consumer.backlog.push(body);
    if (consumer.buffered > this.broadcastBacklogLimit) {
      consumer.backlog[consumer.head++] = '';
      this.counters.broadcastDropped++;
      if (this.counters.broadcastDropped % 1000 === 1) {
        this.logger.warn(
          { group: consumer.options.group, dropped: this.counters.broadcastDropped },
          'A broadcast subscription fell behind; dropping its oldest events',
        );
      }
    }
    if (consumer.head > 1024 && consumer.head * 2 > consumer.backlog.length) {
      consumer.backlog = consumer.backlog.slice(consumer.head);
      consumer.head = 0;
    }
  }

  private runBroadcast(consumer: Consumer, body: string): void {
    consumer.inFlight++;
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
    })().finally(() => {
      consumer.inFlight--;
      if (!consumer.cancelled && consumer.buffered > 0) {
        const next = consumer.backlog[consumer.head]!;
        consumer.backlog[consumer.head++] = '';
        if (consumer.head === consumer.backlog.length) {
          consumer.backlog = [];
          consumer.head = 0;
        }
        this.runBroadcast(consumer, next);
      }
    });
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
    consumer.backlog = [];
    consumer.head = 0;
    this.broadcasts.delete(consumer);
    await consumer.drained();
  }

  // ---- dead letters -----------------------------------------------------------------------------

  async listDeadLetters(group: string, limit = 100): Promise<DeadLetter[]> {
    await this.loaded;
    const docs = await this.store.dead(group, limit);
    return docs.map((doc) => toDeadLetter(group, doc));
  }

  async replayDeadLetters(group: string, ids?: string[]): Promise<number> {
    this.assertOpen();
    await this.loaded;
    const state = this.groups.get(group);
    if (!state) return 0;
    const wanted = ids ? new Set(ids) : null;
    // Letters that die again during this replay come after this position: they are not replayed twice.
    const before = this.nextSeq();
    let after = 0;
    let replayed = 0;
    for (;;) {
      const page = await this.store.dead(group, REPLAY_PAGE, after, before);
      for (const doc of page) {
        after = doc.seq;
        if (wanted && !wanted.has(eventIdOf(doc.body))) continue;
        const seq = this.nextSeq();
        const moved = await this.store.move(doc._id, 'dead', {
          seq,
          state: 'pending',
          attempt: 1,
          availableAt: Date.now(),
        });
        if (!moved) continue;
        replayed++;
        state.release(doc._id, seq);
      }
      if (page.length < REPLAY_PAGE) break;
    }
    if (replayed > 0) this.wakeSoon(state);
    return replayed;
  }

  async queueStats(groups: readonly string[]): Promise<QueueStats[]> {
    this.assertOpen();
    await this.loaded;
    const stats: QueueStats[] = [];
    for (const name of groups) {
      const group = this.groups.get(name);
      const consumers = group ? group.consumers.filter((consumer) => !consumer.cancelled).length : 0;
      // Deliveries being handled, or their outcome written, are still pending in the journal.
      const pending = await this.store.count(name, 'pending');
      let handling = group?.recording ?? 0;
      for (const consumer of group?.consumers ?? []) handling += consumer.inFlight;
      stats.push({
        group: name,
        ready: Math.max(0, pending - handling),
        consumers,
        deadLetters: await this.store.count(name, 'dead'),
      });
    }
    return stats;
  }

  // ---- lifecycle --------------------------------------------------------------------------------

  async ping(): Promise<void> {
    if (this.state === 'closed') throw new Error('Message bus is closed');
    await this.loaded;
    await this.store.ping();
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
      if (group.dueTimer) clearTimeout(group.dueTimer);
      group.dueTimer = null;
    }
    // Reads and retry moves under way finish before the caller closes the store.
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  private assertOpen(): void {
    if (this.state === 'closed') throw new Error('Message bus is closed');
  }

  /** Restores the known groups and the sequence, and arms the timers of waiting retries. */
  private async load(): Promise<void> {
    await this.store.prepare();
    for (const record of await this.store.groups()) {
      this.groups.set(record.group, new Group(record.group, record.types));
    }
    const declared = this.declareKnownGroups();
    this.bootSeq = await this.store.maxSeq();
    this.seq = this.bootSeq;
    for (const group of declared) await this.store.saveGroup(group.name, group.types);
    for (const group of this.groups.values()) {
      const due = await this.store.nextDueAt(group.name);
      if (due !== null) this.scheduleDue(group, due);
    }
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

/** The queues in SQL tables of the embedded store (see SqlQueueStore). */
function queueStoreOf(options: InProcessBusOptions): SqlQueueStore {
  const { sql } = options.store;
  if (!sql) {
    throw new Error(
      `The in-process bus keeps its queues in the embedded store; a ${options.store.kind} store has none: use RabbitMQ (AMQP_URL) with it`,
    );
  }
  return new SqlQueueStore(sql, options.queues ?? 'bus_journal');
}

function eventIdOf(body: string): string {
  try {
    const value: unknown = JSON.parse(body);
    return envelopeProblem(value) === null ? (value as EventEnvelope).id : '';
  } catch {
    return '';
  }
}

function toDeadLetter(group: string, doc: DeliveryDoc): DeadLetter {
  const common = {
    group,
    reason: doc.reason ?? '',
    attempts: doc.attempts ?? doc.attempt,
    deadAt: doc.deadAt ?? '',
  };
  let value: unknown;
  try {
    value = JSON.parse(doc.body);
  } catch {
    value = undefined;
  }
  if (envelopeProblem(value) === null) {
    const event = value as EventEnvelope;
    return { id: event.id, event, ...common };
  }
  const event: EventEnvelope = { id: '', type: '', occurredAt: common.deadAt, correlationId: '', data: null };
  return { id: '', event, ...common, raw: doc.body };
}
