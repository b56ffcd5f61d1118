import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope } from '@lead-capture/contracts';
import { type Collection, type DocStore, isDuplicateKeyError } from '@lead-capture/docstore';
import { v5 as uuidV5 } from 'uuid';

/** The id of the event a stage publishes for a trigger: UUID v5 of the trigger's id, the same on every delivery and replica. */
export function derivedEventId(triggerEventId: string, namespace: string): string {
  return uuidV5(triggerEventId, namespace);
}

/** What a stage computed for one triggering event, stored under the trigger's id. */
export type StageResultDoc<TResult extends object> = TResult & {
  /** The triggering event's id. */
  _id: string;
  published: boolean;
  createdAt: Date;
};

export interface StageResultsOptions<TEvent extends EventEnvelope, TResult extends object, TNext> {
  /** Where the results are kept. */
  collection: string;
  /** A redelivery later than this computes again (still under the same derived event id). */
  retentionDays: number;
  /** The type of the event the stage publishes. */
  nextType: string;
  /** UUID v5 namespace of the published events' ids. */
  namespace: string;
  /** The stage's own work, done once per triggering event (per retention period). */
  compute(event: TEvent): Promise<TResult>;
  /** The payload of the published event, from the trigger and its stored result. */
  next(event: TEvent, result: StageResultDoc<TResult>): TNext;
}

/**
 * One stage of the event chain, idempotent: the first delivery of a triggering event computes its
 * result and stores it under the trigger's id before publishing the next event, whose id is derived
 * from the trigger's; a redelivery (or a second replica racing it) publishes the stored result under
 * the same id, and nothing once it is marked published.
 */
export class StageResults<TEvent extends EventEnvelope, TResult extends object, TNext> {
  private readonly results: Collection<StageResultDoc<TResult>>;

  constructor(
    private readonly deps: { store: DocStore; bus: MessageBus },
    private readonly options: StageResultsOptions<TEvent, TResult, TNext>,
  ) {
    this.results = deps.store.collection<StageResultDoc<TResult>>(options.collection);
  }

  /** The retention index: results expire `retentionDays` after they were computed. */
  async createIndexes(): Promise<void> {
    await this.results.createIndex(
      { createdAt: 1 },
      { expireAfterSeconds: this.options.retentionDays * 24 * 3600 },
    );
  }

  /** The id the next event gets for this trigger. */
  nextEventId(triggerEventId: string): string {
    return derivedEventId(triggerEventId, this.options.namespace);
  }

  async handle(event: TEvent): Promise<void> {
    const result = (await this.results.findOne({ _id: event.id })) ?? (await this.compute(event));
    if (result.published) return;
    await this.deps.bus.publish(this.options.nextType, this.options.next(event, result), {
      id: this.nextEventId(event.id),
      correlationId: event.correlationId,
      causationId: event.id,
    });
    await this.results.updateOne({ _id: event.id }, { $set: { published: true } });
  }

  private async compute(event: TEvent): Promise<StageResultDoc<TResult>> {
    const result = {
      _id: event.id,
      ...(await this.options.compute(event)),
      published: false,
      createdAt: new Date(),
    } as StageResultDoc<TResult>;
    try {
      await this.results.insertOne(result);
      return result;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // Another delivery of the same event stored its result first: that one is published.
      const stored = await this.results.findOne({ _id: event.id });
      if (!stored) throw error;
      return stored;
    }
  }
}
