import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventEnvelope } from '@lead-capture/contracts';
import type { DocStore, Transaction } from '@lead-capture/docstore';
import { errorMessage, parseMessage, type RetryPolicy } from '../envelope.js';
import type { DeliveryReporter } from '../observe.js';
import type { BusLogger, DeliveryContext, EventHandler, EventValidator, StagedPublish } from '../types.js';
import { ChainRound, failureOutcome, HopFailed } from './chain-round.js';
import { type DeliveryChange, type DeliveryDoc, type DeliveryState, deliveryId } from './deliveries.js';
import type { ForegroundWork } from './foreground.js';

/** A handler a hop may be handed to as a function call: a subscriber of this process with `chain`. */
export interface ChainedConsumer {
  handler: EventHandler;
  policy: RetryPolicy;
  /** See SubscribeOptions.chainBatch. */
  batch?: ChainBatchHandler;
}

/** Several events of one chain for one group, in one call (see SubscribeOptions.chainBatch). */
export type ChainBatchHandler = (events: EventEnvelope[], context: DeliveryContext) => Promise<void>;

/** The deliveries of one event to the groups that are not chained, held by their groups until settled. */
export interface RoutedDeliveries {
  deliveries: DeliveryDoc[];
  /** `written`: committed (the groups may hand them out, broadcasts go out); otherwise forgotten. */
  settle(written: boolean): void;
}

/** What the runner writes in the bus's queue tables, inside its batch's transaction. */
export interface ChainQueue {
  insert(deliveries: DeliveryDoc[], tx?: Transaction): Promise<void>;
  remove(ids: string[], tx?: Transaction): Promise<void>;
  move(id: string, from: DeliveryState, change: DeliveryChange, tx?: Transaction): Promise<boolean>;
}

/** A store whose transactions the code they run joins without being handed `tx` (the embedded one). */
export type ChainStore = DocStore & Required<Pick<DocStore, 'ambientTransaction'>>;

/** What the chain runner needs of the in-process bus. */
export interface ChainHost {
  readonly store: ChainStore;
  readonly queue: ChainQueue;
  readonly logger: BusLogger;
  readonly validate: EventValidator | undefined;
  readonly reporter: DeliveryReporter;
  /** Senders first: each head waits for the requests in flight here (see ForegroundWork). */
  readonly foreground: ForegroundWork;
  /** The durable groups that receive an event type. */
  groupsFor(type: string): readonly string[];
  /** The handler a delivery to `group` is chained to; null when the group is queued. */
  chainedConsumer(group: string): ChainedConsumer | null;
  /** Held deliveries of `envelope` to `groups` (and its broadcasts); null when nobody receives them. */
  route(envelope: EventEnvelope, groups: readonly string[]): RoutedDeliveries | null;
  nextSeq(): number;
  /** After the batch: the head delivery is no longer held; `pendingSeq` when it is pending again. */
  release(group: string, id: string, pendingSeq: number | null): void;
  /** A delayed retry written by the batch is due at `at`. */
  retryAt(group: string, at: number): void;
}

/** Work that waits on the network for a batch's heads, done before its transaction (see prepareChained). */
export type ChainWarmer = (head: EventEnvelope) => Promise<void>;

/** The most first deliveries one chained batch takes: bounds how long it holds the store's writer. */
export const MAX_CHAIN_BATCH = 32;

interface Hop {
  group: string;
  consumer: ChainedConsumer;
  envelope: EventEnvelope;
}

/** One handler call of a chain: what it published, until the batch commits. */
class HopFrame {
  open = true;
  /** Events for chained consumers, handed to them once this hop is done (breadth first). */
  readonly next: Hop[] = [];
  /** Deliveries to queued groups (and broadcasts), released once the batch commits. */
  readonly staged: RoutedDeliveries[] = [];
}

const currentHop = new AsyncLocalStorage<HopFrame>();

/** A hop after the head: its event was published in this very transaction (DeliveryContext.chained). */
const CHAINED_HOP = { attempt: 1, chained: true } as const;

/**
 * Chained stages (issue 25; Flink's operator chaining): where a consumer of an event is hosted by
 * this process on the store the bus keeps its queues in, the event is handed to it as a function
 * call inside the producer's transaction, not journaled and redelivered. The runner takes up to
 * MAX_CHAIN_BATCH first deliveries of a chained group (what is pending: 1 when idle, more under a
 * backlog) and runs them one after another, each head's chain in a savepoint of the store's group
 * commit (which takes what ran since the last one), yielding to waiting writes between two heads:
 *
 * - each delivery's chain goes breadth first through the chained consumers of every event it
 *   publishes, each handler call in a savepoint of its own;
 * - a handler that throws is rolled back to its savepoint and its event becomes an ordinary retry of
 *   its group (a delayed delivery, handled unchained), while the rest of the batch commits;
 * - events for groups that are not chained (and broadcasts) are queued in the same commit;
 * - the heads' deliveries are removed in that commit too;
 * - something else failing in a head's savepoint (the store) leaves its delivery queued as it was.
 *
 * Work that waits on the network runs before the transaction (`warmers`), never while the store's one
 * writer is held. Senders come first: while a webhook is being answered in this process, a head waits
 * for it (at most BACKGROUND_MAX_WAIT_MS), so a burst is accepted at the speed of the accept path and
 * the chain drains behind it. Retries (attempt > 1) are not chained: they take the bus's ordinary path.
 */
export class ChainRunner {
  readonly #host: ChainHost;
  readonly #warmers: ChainWarmer[] = [];

  constructor(host: ChainHost) {
    this.#host = host;
  }

  /** Registers work a batch's heads need from the network (DNS, HTTP), done before its transaction. */
  addWarmer(warmer: ChainWarmer): void {
    this.#warmers.push(warmer);
  }

  /**
   * Called by the bus's transactional publisher: inside a chained handler call, the event's chained
   * consumers get it as a call once the handler is done, its other groups a delivery in this
   * transaction. Null outside a chain (the bus queues the event itself).
   */
  async stage(tx: Transaction, envelope: EventEnvelope): Promise<StagedPublish | null> {
    const frame = currentHop.getStore();
    if (!frame?.open) return null;
    const host = this.#host;
    const chained: Hop[] = [];
    const queued: string[] = [];
    for (const group of host.groupsFor(envelope.type)) {
      const consumer = host.chainedConsumer(group);
      if (consumer) chained.push({ group, consumer, envelope });
      else queued.push(group);
    }
    const routed = host.route(envelope, queued);
    if (!routed && chained.length === 0) return null;
    if (routed) {
      try {
        await host.queue.insert(routed.deliveries, tx);
      } catch (error) {
        routed.settle(false);
        throw error;
      }
      frame.staged.push(routed);
    }
    frame.next.push(...chained);
    return {
      committed: () => {},
      // The change that published it rolled back (inside the handler): as if never published.
      aborted: () => {
        for (const hop of chained) frame.next.splice(frame.next.indexOf(hop), 1);
        if (!routed) return;
        frame.staged.splice(frame.staged.indexOf(routed), 1);
        routed.settle(false);
      },
    };
  }

  /**
   * A publish outside the outbox (`bus.publish`, an outbox relaying its entries) made inside a
   * chained handler: its deliveries join the chain's transaction, so they are released once it is
   * committed (forgotten if the handler's savepoint rolls back), like a staged event's. False
   * outside a chain.
   */
  async publishInChain(envelope: EventEnvelope): Promise<boolean> {
    const frame = currentHop.getStore();
    if (!frame?.open) return false;
    const host = this.#host;
    const routed = host.route(envelope, host.groupsFor(envelope.type));
    if (!routed) return false;
    try {
      await host.queue.insert(routed.deliveries);
    } catch (error) {
      routed.settle(false);
      throw error;
    }
    frame.staged.push(routed);
    return true;
  }

  /**
   * Runs first deliveries of `group` (held by the group) as one chained batch; resolves once their
   * outcomes are committed and released.
   */
  async runBatch(group: string, consumer: ChainedConsumer, docs: readonly DeliveryDoc[]): Promise<void> {
    const heads = docs.map((doc) => ({ doc, parsed: parseMessage(doc.body, this.#host.validate) }));
    await this.#warm(heads.flatMap(({ parsed }) => ('envelope' in parsed ? [parsed.envelope] : [])));
    // One head after another, each in a savepoint of the store's current commit (its group commit
    // takes what ran since the last one). Between two heads the event loop turns: the writes that
    // waited meanwhile (a webhook's) go first, and the store may commit.
    const committed: Promise<void>[] = [];
    for (const head of heads) {
      const senders = this.#host.foreground.turn();
      if (senders) await senders;
      const { ran, done } = this.#runHead(group, consumer, head.doc, head.parsed);
      committed.push(done);
      await ran;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(committed);
  }

  /**
   * One head's chain in its own savepoint of the batch's commit (its only one: the stages' own
   * transactions run in place in it). SQLite keeps a savepoint's undo records until the outermost one
   * is released, and each savepoint level copies every page first touched in it to its sub-journal,
   * so a savepoint per stage made every write of the chain dearer.
   */
  #runHead(
    group: string,
    consumer: ChainedConsumer,
    doc: DeliveryDoc,
    parsed: ReturnType<typeof parseMessage>,
  ): { ran: Promise<void>; done: Promise<void> } {
    let finished!: () => void;
    const ran = new Promise<void>((resolve) => {
      finished = resolve;
    });
    const done = this.#runHeadChain(group, consumer, doc, parsed, finished).finally(finished);
    return { ran, done };
  }

  /**
   * `finished` is called once the chain's work is done, before its commit. A stage that fails rolls
   * the head's whole savepoint back; the chain then runs again with that stage's events queued as
   * its retries instead of handed to it (the stages are deterministic and idempotent, and nothing
   * of the first run was committed). Its own head failing, the head's delivery is settled alone.
   */
  async #runHeadChain(
    group: string,
    consumer: ChainedConsumer,
    doc: DeliveryDoc,
    parsed: ReturnType<typeof parseMessage>,
    finished: () => void,
  ): Promise<void> {
    const host = this.#host;
    const failed = new Map<string, HopFailed>();
    for (;;) {
      const round = new ChainRound(failed, host.reporter);
      try {
        await host.store.ambientTransaction(
          async (tx) => {
            await this.#chainOf(tx, group, consumer, doc, parsed, round);
            finished();
          },
          { inlineNested: (error) => round.nestedFailed(error) },
        );
      } catch (error) {
        for (const undo of round.ifRolledBack) undo();
        if (error instanceof HopFailed && !failed.has(error.group)) {
          failed.set(error.group, error);
          continue;
        }
        // Nothing of this chain is committed: its delivery is pending as it was.
        host.logger.error({ group, err: error }, 'A chained delivery could not commit; it stays queued');
        host.release(group, doc._id, doc.seq);
        return;
      }
      for (const commit of round.afterCommit) commit();
      return;
    }
  }

  /** The head's chain inside its transaction, and its delivery's outcome. */
  async #chainOf(
    tx: Transaction,
    group: string,
    consumer: ChainedConsumer,
    doc: DeliveryDoc,
    parsed: ReturnType<typeof parseMessage>,
    round: ChainRound,
  ): Promise<void> {
    const host = this.#host;
    if ('problem' in parsed) {
      host.logger.warn({ group, reason: parsed.problem }, 'Dead-lettering an unreadable message');
      host.reporter.unreadable(group, doc.attempt);
      await this.#settleFailedHead(tx, group, doc, parsed.problem, 1, round.afterCommit);
      return;
    }
    const headFailure = round.failed.get(group);
    if (headFailure) {
      round.report(group, parsed.envelope, doc.attempt, headFailure, consumer.policy);
      const { maxAttempts } = consumer.policy;
      await this.#settleFailedHead(
        tx,
        group,
        doc,
        headFailure.reason,
        maxAttempts,
        round.afterCommit,
        consumer,
      );
      return;
    }
    await this.#runChain(tx, { group, consumer, envelope: parsed.envelope }, doc.attempt, round);
    await host.queue.remove([doc._id], tx);
    round.afterCommit.push(() => host.release(group, doc._id, null));
  }

  async #warm(envelopes: readonly EventEnvelope[]): Promise<void> {
    if (this.#warmers.length === 0 || envelopes.length === 0) return;
    await Promise.all(
      envelopes.flatMap((envelope) =>
        this.#warmers.map((warm) =>
          warm(envelope).catch((error: unknown) =>
            this.#host.logger.warn({ err: error, eventId: envelope.id }, 'Chain warmer failed'),
          ),
        ),
      ),
    );
  }

  /** One head's chain, breadth first; a stage that fails throws HopFailed (see #runHeadChain). */
  async #runChain(tx: Transaction, head: Hop, attempt: number, round: ChainRound): Promise<void> {
    const waiting = await this.#runHop(head, round, { attempt });
    // Hops to a consumer that takes them together wait for the end of the chain: one call then.
    const gathered = new Map<string, Hop[]>();
    while (waiting.length > 0 || gathered.size > 0) {
      const hop = waiting.shift();
      if (!hop) {
        const [group, hops] = gathered.entries().next().value!;
        gathered.delete(group);
        const failure = round.failed.get(group);
        if (failure) for (const each of hops) await this.#queueRetry(tx, each, failure, round);
        else waiting.push(...(await this.#runGathered(hops, round)));
        continue;
      }
      if (hop.consumer.batch) {
        gathered.set(hop.group, [...(gathered.get(hop.group) ?? []), hop]);
        continue;
      }
      const failure = round.failed.get(hop.group);
      if (failure) await this.#queueRetry(tx, hop, failure, round);
      else waiting.push(...(await this.#runHop(hop, round, CHAINED_HOP)));
    }
  }

  /** The gathered hops of one group (its `batch` consumer), as one call. */
  #runGathered(hops: Hop[], round: ChainRound): Promise<Hop[]> {
    const [first] = hops as [Hop];
    if (hops.length === 1) return this.#runHop(first, round, CHAINED_HOP);
    const envelopes = hops.map((hop) => hop.envelope);
    return this.#runHop(first, round, CHAINED_HOP, (context) => first.consumer.batch!(envelopes, context));
  }

  /**
   * One handler call, in the head's savepoint: the hops it publishes to. Its transactions run in
   * place, so one that failed fails the hop even if the handler carried on: nothing half-done of it
   * may commit.
   */
  async #runHop(
    hop: Hop,
    round: ChainRound,
    delivery: Pick<DeliveryContext, 'attempt' | 'chained'>,
    call: (context: DeliveryContext) => Promise<void> = (context) =>
      hop.consumer.handler(hop.envelope, context),
  ): Promise<Hop[]> {
    const { attempt } = delivery;
    const frame = new HopFrame();
    const startedAt = performance.now();
    try {
      await currentHop.run(frame, () => call({ ...delivery, group: hop.group, redelivered: false }));
      round.throwIfNestedFailed();
    } catch (error) {
      frame.open = false;
      for (const routed of frame.staged) routed.settle(false);
      this.#host.logger.warn(
        { group: hop.group, eventId: hop.envelope.id, type: hop.envelope.type, attempt, err: error },
        'Chained handler failed; its chain runs again with its event retried alone',
      );
      throw new HopFailed(hop.group, errorMessage(error), performance.now() - startedAt);
    }
    frame.open = false;
    round.report(hop.group, hop.envelope, attempt, performance.now() - startedAt, hop.consumer.policy);
    round.afterCommit.push(() => {
      for (const routed of frame.staged) routed.settle(true);
    });
    round.ifRolledBack.push(() => {
      for (const routed of frame.staged) routed.settle(false);
    });
    return frame.next;
  }

  /** A chained hop failed: its event becomes a delivery of its group, as a retry (or dead letter). */
  async #queueRetry(tx: Transaction, hop: Hop, failure: HopFailed, round: ChainRound): Promise<void> {
    const host = this.#host;
    const seq = host.nextSeq();
    const outcome = failureOutcome(hop.consumer.policy, 1, failure.reason);
    round.report(hop.group, hop.envelope, 1, failure, hop.consumer.policy);
    const delivery: DeliveryDoc = {
      _id: deliveryId(seq),
      kind: 'delivery',
      group: hop.group,
      body: JSON.stringify(hop.envelope),
      ...outcome.change(seq),
    };
    await host.queue.insert([delivery], tx);
    if (outcome.state === 'delayed')
      round.afterCommit.push(() => host.retryAt(hop.group, delivery.availableAt));
  }

  /** A head failed (or was unreadable): its delivery moves to a retry or the dead letters, in the batch. */
  async #settleFailedHead(
    tx: Transaction,
    group: string,
    doc: DeliveryDoc,
    reason: string,
    maxAttempts: number,
    afterCommit: (() => void)[],
    consumer?: ChainedConsumer,
  ): Promise<void> {
    const host = this.#host;
    const policy = consumer?.policy ?? { maxAttempts, retryDelayMs: () => 0 };
    const outcome = failureOutcome(policy, doc.attempt, reason);
    const seq = host.nextSeq();
    await host.queue.move(doc._id, 'pending', outcome.change(seq), tx);
    afterCommit.push(() => {
      host.release(group, doc._id, null);
      if (outcome.state === 'delayed') host.retryAt(group, outcome.change(seq).availableAt);
    });
  }
}
