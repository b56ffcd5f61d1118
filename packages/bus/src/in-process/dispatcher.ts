import type { EventEnvelope } from '@lead-capture/contracts';
import { errorMessage, parseMessage, truncate } from '../envelope.js';
import type { DeliveryReporter } from '../observe.js';
import type { BusLogger } from '../types.js';
import type { ChainedConsumer, ChainRunner } from './chain-runner.js';
import { type Consumer, chainedOf } from './consumer.js';
import type { DeliveryDoc, Sequence } from './deliveries.js';
import type { ForegroundWork } from './foreground.js';
import { ChainBatch, type Group } from './group.js';
import type { SqlQueueStore } from './sql-queue.js';
import type { InProcessBusOptions } from './types.js';

type Outcome =
  | { kind: 'done' }
  | { kind: 'retry'; reason: string; delayMs: number }
  | { kind: 'dead'; reason: string };

/**
 * Hands each group's queued deliveries to its consumers and writes what became of them: removed once
 * handled, retried later (with the group's retry timer), or dead-lettered.
 */
export class Dispatcher {
  /** Fetches and retry promotions under way, awaited by close() before the store may close. */
  private readonly background = new Set<Promise<void>>();
  private closed = false;
  /** Handled deliveries whose removal is about to be written, together. */
  private removals: { ids: string[]; done: Promise<void> } | null = null;
  /** Reads of the queues, and the deliveries they returned. */
  fetches = 0;
  fetched = 0;

  constructor(
    private readonly store: SqlQueueStore,
    private readonly sequence: Sequence,
    private readonly options: Pick<InProcessBusOptions, 'logger' | 'validate'>,
    private readonly reporter: DeliveryReporter,
    /** Runs chained handlers (SubscribeOptions.chain) where the store can: the embedded one. */
    private readonly chain: ChainRunner | null,
    /** What each delivery gives way to (senders first). */
    private readonly foreground: ForegroundWork,
  ) {}

  private get logger(): BusLogger {
    return this.options.logger;
  }

  wakeSoon(group: Group): void {
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
    if (this.closed || group.freeSlots === 0) return;
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
      if (free === 0 || this.closed) return;
      let heldAhead = 0;
      for (const seq of group.held.values()) if (seq > group.cursor) heldAhead++;
      const limit = free + heldAhead;
      const docs = await this.store.pending(group.name, group.cursor, limit);
      this.fetches++;
      this.fetched += docs.length;
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

  private async deliver(group: Group, consumer: Consumer, doc: DeliveryDoc): Promise<void> {
    let outcome: Outcome;
    try {
      const senders = this.foreground.turn();
      if (senders) await senders;
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
    const parsed = parseMessage(doc.body, this.options.validate);
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
        redelivered: doc.seq <= this.sequence.boot,
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
        seq: this.sequence.next(),
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
    const seq = this.sequence.next();
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
  scheduleDue(group: Group, at: number): void {
    if (this.closed) return;
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
    if (this.closed) return;
    const promoted = await this.store.promoteDue(group.name, Date.now());
    if (promoted > 0) {
      // Their positions are where they failed: read the queue from its start again (held ones skipped).
      group.rewind = 0;
      this.pump(group);
    }
    const next = await this.store.nextDueAt(group.name);
    if (next !== null) this.scheduleDue(group, next);
  }

  /** Stops the retry timers; resolves once the reads and retry moves under way are done. */
  async close(groups: Iterable<Group>): Promise<void> {
    this.closed = true;
    for (const group of groups) {
      if (group.dueTimer) clearTimeout(group.dueTimer);
      group.dueTimer = null;
    }
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }
}
