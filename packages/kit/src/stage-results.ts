import type { BatchHandler, DeliveryContext, EventHandler } from '@lead-capture/bus';
import type { EventDataMap, EventEnvelope, EventType } from '@lead-capture/contracts';
import { type Collection, type DocStore, isDuplicateKeyError } from '@lead-capture/docstore';
import type { Outbox, OutboxChange } from './outbox.js';
import { timeOrderedUuidV5 } from './uuid-v5.js';

/**
 * The id of the event a stage publishes for a trigger: derived from the trigger's id (UUID v5, with
 * the trigger's time first when it has one: `timeOrderedUuidV5`), the same on every delivery and replica.
 */
export function derivedEventId(triggerEventId: string, namespace: string): string {
  return timeOrderedUuidV5(triggerEventId, namespace, triggerEventId);
}

/** A handler that may also take several events at once (see SubscribeOptions.batch). */
export type BatchingHandler = EventHandler & { batch?: BatchHandler };

/** What a stage computed for one triggering event, stored under the trigger's id. */
export type StageResultDoc<TResult extends object> = TResult & {
  /** The triggering event's id. */
  _id: string;
  createdAt: Date;
};

export interface StageResultsOptions<
  TEvent extends EventEnvelope,
  TResult extends object,
  TNext extends EventType,
> {
  /** Where the results are kept. */
  collection: string;
  /** A redelivery later than this computes again (still under the same derived event id). Default 30. */
  retentionDays?: number;
  /** The type of the event the stage publishes. */
  nextType: TNext;
  /** The id of the published event, derived from the trigger's (e.g. with `derivedEventId`): the same on every delivery. */
  eventId(triggerEventId: string): string;
  /** The outbox stream of the published event (the lead's id): a stream's events go out in order. */
  stream(event: TEvent): string;
  /**
   * The stage's own work, done once per triggering event (per retention period). Given the context
   * of a chained delivery (`context.chained`, handled alone), it runs in the transaction `commit`
   * runs in: what it writes then commits with the event, or not at all (a failure anywhere rolls the
   * hop back). Otherwise (and always in a batch) its writes commit on their own, before the event.
   */
  compute(event: TEvent, context?: DeliveryContext): Promise<TResult>;
  /** The payload of the published event, from the trigger and its result. */
  next(event: TEvent, result: TResult): EventDataMap[TNext];
  /** Other writes of the stage that must commit with its event (made after the emit, before the result is stored). */
  commit?(change: OutboxChange, event: TEvent, result: TResult): Promise<void>;
}

/**
 * One stage of the event chain, idempotent: the first delivery of a triggering event computes its
 * result, then stores it under the trigger's id and records the next event (its id derived from the
 * trigger's) in one outbox change, so the result and its event are committed together. A redelivery
 * (or a second replica racing it) finds the result stored and emits nothing: the event was
 * committed with it, and the outbox publishes it. Racing deliveries collide on the result's id and
 * only the first commits.
 */
export class StageResults<TEvent extends EventEnvelope, TResult extends object, TNext extends EventType> {
  private readonly results: Collection<StageResultDoc<TResult>>;

  constructor(
    private readonly deps: { store: DocStore; outbox: Outbox },
    private readonly options: StageResultsOptions<TEvent, TResult, TNext>,
  ) {
    this.results = deps.store.collection<StageResultDoc<TResult>>(options.collection);
  }

  /** The retention index: results expire `retentionDays` after they were computed. */
  async createIndexes(): Promise<void> {
    await this.results.createIndex(
      { createdAt: 1 },
      { expireAfterSeconds: (this.options.retentionDays ?? 30) * 24 * 3600 },
    );
  }

  /** The id the next event gets for this trigger. */
  nextEventId(triggerEventId: string): string {
    return this.options.eventId(triggerEventId);
  }

  /**
   * `handle` for the bus, with `batch` for a queue that hands over several deliveries at once
   * (SubscribeOptions.batch): subscribeGroup passes it on.
   */
  readonly handler: BatchingHandler = Object.assign(
    (event: EventEnvelope, context?: DeliveryContext) => this.handle(event as TEvent, context),
    {
      batch: (events: EventEnvelope[]) => this.handleBatch(events as TEvent[]),
    },
  );

  /**
   * Several triggering events at once, in one outbox change: the results stored already are skipped,
   * the others computed (concurrently, outside the transaction), then every result and its event
   * committed together, and the events published with one wait for the broker. Resolves with the
   * events left to `handle` one by one: those whose computation failed. A failing commit (a racing
   * delivery stored a result first) leaves them all to it. Where the store has no transactions
   * every event is handled alone.
   */
  async handleBatch(events: readonly TEvent[]): Promise<TEvent[]> {
    if (!this.deps.store.transactional) return [...events];
    const stored = new Set(
      (
        await this.results.find({ _id: { $in: events.map((event) => event.id) } }, { projection: { _id: 1 } })
      ).map((result) => result._id),
    );
    const pending = events.filter((event) => !stored.has(event.id));
    const computed = await Promise.allSettled(pending.map((event) => this.options.compute(event)));
    const left: TEvent[] = [];
    const done: { event: TEvent; result: TResult }[] = [];
    for (const [index, event] of pending.entries()) {
      const outcome = computed[index]!;
      if (outcome.status === 'fulfilled') done.push({ event, result: outcome.value });
      else left.push(event);
    }
    if (done.length === 0) return left;
    await this.deps.outbox.change(async (change) => {
      const results = change.collection<StageResultDoc<TResult>>(this.options.collection);
      for (const { event, result } of done) await this.#record(change, event, result);
      await results.insertMany(
        done.map(
          ({ event, result }) =>
            ({ _id: event.id, ...result, createdAt: new Date() }) as StageResultDoc<TResult>,
        ),
      );
    });
    return left;
  }

  /** The trigger's next event and the stage's other writes, in `change`. */
  async #record(change: OutboxChange, event: TEvent, result: TResult): Promise<void> {
    await change.emit(this.options.stream(event), this.options.nextType, this.options.next(event, result), {
      id: this.nextEventId(event.id),
      correlationId: event.correlationId,
      causationId: event.id,
    });
    await this.options.commit?.(change, event, result);
  }

  async handle(event: TEvent, context?: DeliveryContext): Promise<void> {
    // A chained hop's trigger was published in this very transaction, so no result can be stored
    // for it yet: it is not looked up. It is still kept, for a later delivery of the same trigger
    // (a replay); and should one be stored after all, the insert below fails the hop, and its chain
    // runs again with the trigger queued, which then finds the result.
    if (!context?.chained && (await this.results.findOne({ _id: event.id }, { projection: { _id: 1 } })))
      return;
    // Computed outside the transaction: the work may wait on the network (DNS) or on settings.
    const result = await this.options.compute(event, context);
    try {
      await this.deps.outbox.change(async (change) => {
        const results = change.collection<StageResultDoc<TResult>>(this.options.collection);
        // A racing delivery committed first (transactions see each other's commits in order). In a
        // transaction the result's unique id settles that race instead: its insert below fails with
        // a duplicate key and everything this change wrote is rolled back (handled after the change).
        if (!this.deps.store.transactional) {
          if (await results.findOne({ _id: event.id }, { projection: { _id: 1 } })) return;
        }
        // The event first: where the store has no transactions, it is then never lost to a crash
        // between the two writes (a redelivery records it again, under the same id).
        await this.#record(change, event, result);
        // The result last: once stored, a redelivery does nothing, so everything above must be done.
        await results.insertOne({
          _id: event.id,
          ...result,
          createdAt: new Date(),
        } as StageResultDoc<TResult>);
      });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // Another delivery of the same event committed its result (and its event) first. Without a
      // stored result the collision was this event's outbox entry, still waiting after a crash on a
      // store without transactions: the bus retries once the relay has published it.
      if (!(await this.#resultStored(event.id))) throw error;
    }
  }

  /**
   * Whether a result is stored for the trigger, as a transaction sees it: the racing delivery's
   * result may still wait in the embedded store's group commit, which a transaction reads (and
   * answers only once it is committed) but the read connection does not see yet.
   */
  async #resultStored(triggerEventId: string): Promise<boolean> {
    const { store } = this.deps;
    const find = (results: Collection<StageResultDoc<TResult>>) =>
      results.findOne({ _id: triggerEventId }, { projection: { _id: 1 } });
    if (!store.transactional) return (await find(this.results)) !== null;
    return (
      (await store.transaction((tx) =>
        find(tx.collection<StageResultDoc<TResult>>(this.options.collection)),
      )) !== null
    );
  }
}
