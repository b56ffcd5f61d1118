import type { EventEnvelope } from '@lead-capture/contracts';
import type { DocStore, Transaction } from '@lead-capture/docstore';
import { BaseBus } from '../base-bus.js';
import { assertPublishable } from '../envelope.js';
import { UnroutableError } from '../errors.js';
import { DeliveryReporter } from '../observe.js';
import type {
  DeadLetter,
  EventHandler,
  QueueStats,
  StagedPublish,
  SubscribeOptions,
  Subscription,
  TransactionalPublisher,
} from '../types.js';
import { Broadcasts } from './broadcasts.js';
import { type ChainedConsumer, type ChainHost, ChainRunner } from './chain-runner.js';
import { Consumer, chainedOf } from './consumer.js';
import { replayDead, toDeadLetter } from './dead-letters.js';
import { type DeliveryDoc, deliveryId, Sequence } from './deliveries.js';
import { Dispatcher } from './dispatcher.js';
import { ForegroundWork } from './foreground.js';
import { Group } from './group.js';
import { SqlQueueStore } from './sql-queue.js';
import type { InProcessBusOptions, InProcessBusStats, InProcessMessageBus } from './types.js';

export type { InProcessBusOptions, InProcessBusStats, InProcessMessageBus } from './types.js';

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

class InProcessBus extends BaseBus implements InProcessMessageBus<string> {
  readonly kind = 'in-process' as const;
  private readonly store: SqlQueueStore;
  private readonly groups = new Map<string, Group>();
  private readonly broadcasts: Broadcasts;
  private readonly routes = new Map<string, Group[]>();
  private readonly loaded: Promise<void>;
  /** `loaded` has resolved: a publish inside a transaction must not wait for it (see stage). */
  private isLoaded = false;
  private readonly sequence = new Sequence();
  private closing: Promise<void> | null = null;
  private readonly reporter: DeliveryReporter;
  /** Runs chained handlers (SubscribeOptions.chain) where the store can: the embedded one. */
  private readonly chain: ChainRunner | null;
  readonly foreground: ForegroundWork;
  private readonly dispatcher: Dispatcher;

  constructor(private readonly options: InProcessBusOptions) {
    super(options.validate);
    this.store = queueStoreOf(options);
    this.reporter = new DeliveryReporter(options.observer, options.logger);
    this.foreground = options.foreground ?? new ForegroundWork();
    this.chain = options.store.ambientTransaction ? new ChainRunner(this.chainHost()) : null;
    this.broadcasts = new Broadcasts(options);
    this.dispatcher = new Dispatcher(
      this.store,
      this.sequence,
      options,
      this.reporter,
      this.chain,
      this.foreground,
    );
    this.loaded = this.load();
    this.loaded.then(
      () => {
        this.isLoaded = true;
      },
      () => {},
    );
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
    return {
      groups: this.groups.size,
      handling,
      recording,
      tracked,
      retryTimers,
      broadcastBuffered: this.broadcasts.buffered,
      broadcastDropped: this.broadcasts.dropped,
      fetches: this.dispatcher.fetches,
      fetched: this.dispatcher.fetched,
    };
  }

  // ---- publishing -------------------------------------------------------------------------------

  /** Resolves once every matching group's delivery is in the journal, in one write. */
  protected async send(envelope: EventEnvelope): Promise<void> {
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
    const broadcasts = this.broadcasts.matching(envelope.type);
    if (groups.length === 0 && broadcasts.length === 0) return null;
    const body = JSON.stringify(envelope);
    const now = Date.now();
    const deliveries = groups.map((group): DeliveryDoc => {
      const seq = this.sequence.next();
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
        if (written) this.dispatcher.wakeSoon(group);
      });
      if (written && broadcasts.length > 0) {
        setImmediate(() => {
          for (const consumer of broadcasts) this.broadcasts.deliver(consumer, body);
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

  // ---- consuming --------------------------------------------------------------------------------

  async subscribe(options: SubscribeOptions, handler: EventHandler): Promise<Subscription> {
    if (this.state !== 'running') throw new Error('Message bus is closing');
    const consumer = new Consumer(options, handler);
    await this.loaded;
    if (options.broadcast) {
      this.broadcasts.add(consumer);
      return { cancel: () => this.broadcasts.cancel(consumer) };
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
    this.dispatcher.wakeSoon(group);
    const subscribed = group;
    return { cancel: () => this.cancel(subscribed, consumer) };
  }

  /** What the chain runner sees of this bus. */
  private chainHost(): ChainHost {
    return {
      store: this.options.store as ChainHost['store'],
      queue: this.store,
      logger: this.options.logger,
      validate: this.options.validate,
      reporter: this.reporter,
      foreground: this.foreground,
      groupsFor: (type) => this.groupsFor(type).map((group) => group.name),
      chainedConsumer: (name) => this.chainedConsumer(name),
      route: (envelope, groups) => this.deliveriesOf(envelope, groups),
      nextSeq: () => this.sequence.next(),
      release: (name, id, pendingSeq) => {
        const group = this.groups.get(name);
        if (!group) return;
        group.release(id, pendingSeq);
        if (pendingSeq !== null) this.dispatcher.wakeSoon(group);
      },
      retryAt: (name, at) => {
        const group = this.groups.get(name);
        if (group) this.dispatcher.scheduleDue(group, at);
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

  private async cancel(group: Group, consumer: Consumer): Promise<void> {
    consumer.cancelled = true;
    const index = group.consumers.indexOf(consumer);
    if (index >= 0) group.consumers.splice(index, 1);
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
    const replayed = await replayDead(this.store, state, ids, this.sequence);
    if (replayed > 0) this.dispatcher.wakeSoon(state);
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
    cancellations.push(this.broadcasts.cancelAll());
    await Promise.all(cancellations);
    this.state = 'closed';
    // Reads and retry moves under way finish before the caller closes the store.
    await this.dispatcher.close(this.groups.values());
  }

  /** Restores the known groups and the sequence, and arms the timers of waiting retries. */
  private async load(): Promise<void> {
    await this.store.prepare();
    for (const record of await this.store.groups()) {
      this.groups.set(record.group, new Group(record.group, record.types));
    }
    const declared = this.declareKnownGroups();
    this.sequence.start(await this.store.maxSeq());
    for (const group of declared) await this.store.saveGroup(group.name, group.types);
    for (const group of this.groups.values()) {
      const due = await this.store.nextDueAt(group.name);
      if (due !== null) this.dispatcher.scheduleDue(group, due);
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
