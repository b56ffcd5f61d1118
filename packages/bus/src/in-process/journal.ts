import type { Collection } from '@lead-capture/docstore';

/** A delivery of one event to one group, as the journal keeps it until the handler succeeds. */
export type DeliveryDoc = {
  _id: string;
  kind: 'delivery';
  group: string;
  seq: number;
  envelope: Record<string, unknown>;
  attempt: number;
  /** Epoch ms before which a retry waits. */
  availableAt: number;
  lastError?: string;
  state: 'pending' | 'dead';
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

/** The in-process bus's durable state, in one docstore collection. */
export class Journal {
  constructor(private readonly collection: Collection) {}

  async prepare(): Promise<void> {
    await this.collection.createIndex({ kind: 1, seq: 1 });
  }

  async groups(): Promise<GroupDoc[]> {
    const docs = await this.collection.find({ kind: 'group' });
    return docs as unknown as GroupDoc[];
  }

  async *deliveries(): AsyncIterable<DeliveryDoc> {
    for await (const doc of this.collection.stream({ kind: 'delivery' }, { sort: { seq: 1 } })) {
      yield doc as unknown as DeliveryDoc;
    }
  }

  async add(deliveries: DeliveryDoc[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.collection.insertMany(deliveries);
  }

  async replace(delivery: DeliveryDoc): Promise<void> {
    await this.collection.replaceOne({ _id: delivery._id }, delivery, { upsert: true });
  }

  async remove(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id });
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

  async ping(): Promise<void> {
    await this.collection.findOne({ _id: 'ping' });
  }
}
