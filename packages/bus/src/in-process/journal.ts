import type { Collection, Document, Transaction } from '@lead-capture/docstore';

/**
 * Where a delivery is: `pending` (in its group's queue, handed out in `seq` order), `delayed` (a retry
 * waiting for `availableAt`; moved to `pending` then), `dead` (a dead letter, listed in `seq` order).
 */
export type DeliveryState = 'pending' | 'delayed' | 'dead';

/** A delivery of one event to one group, as the journal keeps it until the handler succeeds. */
export type DeliveryDoc = {
  _id: string;
  kind: 'delivery';
  group: string;
  /**
   * Position in the delivery's current queue: assigned on publish, again on a retry (the back of the
   * queue, as through RabbitMQ's delay queue), on dead-lettering and on replay.
   */
  seq: number;
  state: DeliveryState;
  /** The envelope as JSON, exactly as published: every handler parses its own copy. */
  body: string;
  attempt: number;
  /** Epoch ms before which a delayed retry waits. */
  availableAt: number;
  lastError?: string;
  reason?: string;
  attempts?: number;
  deadAt?: string;
};

/** A group that has subscribed once: it keeps receiving events, like a declared durable queue. */
export type GroupDoc = {
  _id: string;
  kind: 'group';
  group: string;
  types: string[];
  updatedAt: string;
};

/** Fields a delivery changes when it moves between states. */
export type DeliveryChange = Pick<DeliveryDoc, 'seq' | 'state' | 'attempt' | 'availableAt'> &
  Partial<Pick<DeliveryDoc, 'lastError' | 'reason' | 'attempts' | 'deadAt'>>;

/**
 * The queues of the in-process bus: every delivery lives here, the bus keeps only what its handlers
 * are working on. `JournalStore` keeps them in a docstore collection (durable, on disk), `MemoryStore`
 * in memory (no journal: unit tests). A read sees at least every write that resolved before it
 * started; it may or may not see writes still under way (the bus holds those deliveries meanwhile).
 */
export interface QueueStore {
  /** Creates the indexes; turns what an older journal left into this layout. */
  prepare(groups: readonly string[], now: number): Promise<void>;
  groups(): Promise<GroupDoc[]>;
  saveGroup(group: string, types: string[]): Promise<void>;
  /** The highest `seq` in the store (0 when empty), so sequences keep growing across restarts. */
  maxSeq(groups: readonly string[]): Promise<number>;
  /**
   * Adds deliveries in one write; with `tx`, inside that transaction of the store the queues live
   * in (stores that keep them elsewhere are never given one).
   */
  insert(deliveries: DeliveryDoc[], tx?: Transaction): Promise<void>;
  /** The group's pending deliveries after `afterSeq`, in `seq` order. */
  pending(group: string, afterSeq: number, limit: number): Promise<DeliveryDoc[]>;
  /** Removes handled deliveries, in one write. */
  remove(ids: string[]): Promise<void>;
  /** Moves a delivery (retry, dead letter, replay); false when it is not in `from` any more. */
  move(id: string, from: DeliveryState, change: DeliveryChange): Promise<boolean>;
  /** Turns the group's delayed deliveries due at `now` into pending ones; returns how many. */
  promoteDue(group: string, now: number): Promise<number>;
  /** When the group's next delayed delivery is due; null when none waits. */
  nextDueAt(group: string): Promise<number | null>;
  /** The group's dead letters with `afterSeq` < seq < `beforeSeq`, in `seq` order. */
  dead(group: string, limit: number, afterSeq?: number, beforeSeq?: number): Promise<DeliveryDoc[]>;
  ping(): Promise<void>;
  /** How many of the group's deliveries are in `state` (metrics). */
  count(group: string, state: DeliveryState): Promise<number>;
}

/** What an older journal held: the envelope as an object, no body, retries as `pending`. */
type StoredDelivery = Omit<DeliveryDoc, 'body'> & { body?: string; envelope?: unknown };

/** The in-process bus's durable state, in one docstore collection. */
export class JournalStore implements QueueStore {
  constructor(private readonly collection: Collection) {}

  async prepare(groups: readonly string[], now: number): Promise<void> {
    // The group's queue in order, and its dead letters in order.
    await this.collection.createIndex({ group: 1, state: 1, seq: 1 });
    // The group's retries by due time.
    await this.collection.createIndex({ group: 1, state: 1, availableAt: 1 });
    // A journal written before delayed retries had a state of their own kept them as pending.
    for (const group of groups) {
      await this.collection.updateMany(
        { group, state: 'pending', availableAt: { $gt: now } },
        { $set: { state: 'delayed' } },
      );
    }
  }

  async groups(): Promise<GroupDoc[]> {
    // By their _id prefix: answered from the primary key, without reading the deliveries.
    const docs = await this.collection.find({ _id: { $gte: 'group:', $lt: 'group;' }, kind: 'group' });
    return docs as unknown as GroupDoc[];
  }

  async saveGroup(group: string, types: string[]): Promise<void> {
    const doc: GroupDoc = {
      _id: `group:${group}`,
      kind: 'group',
      group,
      types,
      updatedAt: new Date().toISOString(),
    };
    await this.collection.replaceOne({ _id: doc._id }, doc, { upsert: true });
  }

  async maxSeq(groups: readonly string[]): Promise<number> {
    let max = 0;
    for (const group of groups) {
      for (const state of ['pending', 'delayed', 'dead'] as const) {
        const last = await this.collection.findOne({ group, state }, { sort: { seq: -1 } });
        if (last && typeof last.seq === 'number') max = Math.max(max, last.seq);
      }
    }
    return max;
  }

  async insert(deliveries: DeliveryDoc[], tx?: Transaction): Promise<void> {
    if (deliveries.length === 0) return;
    await (tx ? tx.collection(this.collection.name) : this.collection).insertMany(deliveries);
  }

  async pending(group: string, afterSeq: number, limit: number): Promise<DeliveryDoc[]> {
    const docs = await this.collection.find(
      { group, state: 'pending', seq: { $gt: afterSeq } },
      { sort: { seq: 1 }, limit },
    );
    return docs.map(readDelivery);
  }

  async remove(ids: string[]): Promise<void> {
    await this.collection.deleteMany({ _id: { $in: ids } });
  }

  async move(id: string, from: DeliveryState, change: DeliveryChange): Promise<boolean> {
    const { set, unset } = changeOf(change);
    const result = await this.collection.updateOne(
      { _id: id, state: from },
      { $set: set, ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}) },
    );
    return result.matchedCount === 1;
  }

  async promoteDue(group: string, now: number): Promise<number> {
    const result = await this.collection.updateMany(
      { group, state: 'delayed', availableAt: { $lte: now } },
      { $set: { state: 'pending' } },
    );
    return result.modifiedCount;
  }

  async nextDueAt(group: string): Promise<number | null> {
    const next = await this.collection.findOne(
      { group, state: 'delayed' },
      { sort: { availableAt: 1 }, projection: { availableAt: 1 } },
    );
    return next && typeof next.availableAt === 'number' ? next.availableAt : null;
  }

  async dead(
    group: string,
    limit: number,
    afterSeq = 0,
    beforeSeq = Number.MAX_SAFE_INTEGER,
  ): Promise<DeliveryDoc[]> {
    const docs = await this.collection.find(
      { group, state: 'dead', seq: { $gt: afterSeq, $lt: beforeSeq } },
      { sort: { seq: 1 }, limit },
    );
    return docs.map(readDelivery);
  }

  async ping(): Promise<void> {
    await this.collection.findOne({ _id: 'ping' });
  }

  count(group: string, state: DeliveryState): Promise<number> {
    return this.collection.countDocuments({ group, state });
  }
}

/**
 * A delivery's id, from the sequence it was first given (unique: sequences only grow, across restarts
 * too). Ids in the order of their creation keep the journal's primary key index appending at its end,
 * where random ones dirtied a page anywhere in it for every delivery.
 */
export function deliveryId(seq: number): string {
  return `d${seq.toString(36).padStart(12, '0')}`;
}

/** The sequence a delivery id was made from (see deliveryId). */
export function deliverySeqOf(id: string): number {
  const seq = Number.parseInt(id.slice(1), 36);
  if (id[0] !== 'd' || !Number.isSafeInteger(seq)) throw new Error(`Not a delivery id: ${id}`);
  return seq;
}

/** A journal document as a delivery (an older layout's envelope object becomes its body). */
export function readDelivery(doc: Document): DeliveryDoc {
  const stored = doc as unknown as StoredDelivery;
  const { envelope, ...rest } = stored;
  return { ...rest, body: stored.body ?? JSON.stringify(envelope) };
}

/** The fields of a delivery that only retries and dead letters carry. */
export const OPTIONAL_FIELDS = ['lastError', 'reason', 'attempts', 'deadAt'] as const;

/** The change as $set and $unset: optional fields the change does not carry are removed. */
export function changeOf(change: DeliveryChange): {
  set: Record<string, unknown>;
  unset: Record<string, ''>;
} {
  const set: Record<string, unknown> = {};
  const unset: Record<string, ''> = {};
  for (const [key, value] of Object.entries(change)) if (value !== undefined) set[key] = value;
  for (const key of OPTIONAL_FIELDS) if (change[key] === undefined) unset[key] = '';
  return { set, unset };
}
