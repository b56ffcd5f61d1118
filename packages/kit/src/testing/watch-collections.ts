import type { EventEnvelope, MessageBus } from '@lead-capture/bus';
import type { Collection, DocStore, Document } from '@lead-capture/docstore';

/** The Collection methods that write, for a watcher that counts a stage's writes. */
export const WRITE_METHODS: ReadonlySet<string> = new Set([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'findOneAndUpdate',
  'replaceOne',
]);

/**
 * What a test sees of one call on a watched collection: return a function to run instead of the
 * method (a failure injected in the middle of a change), or nothing to let it run.
 */
export type CollectionWatcher = (call: {
  collection: string;
  method: string;
  inTransaction: boolean;
}) => ((...args: unknown[]) => unknown) | undefined;

/**
 * Shows `watcher` every method used on the collections of `store` and of every transaction it
 * opens (`store.transaction`), keeping the store and its transactions the same objects: a test
 * counts a stage's reads and writes, or fails one of them.
 */
export function watchCollections(store: DocStore, watcher: CollectionWatcher): void {
  watchTarget(store, false, watcher);
  const transaction = store.transaction.bind(store);
  store.transaction = (work, options) =>
    transaction((tx) => {
      watchTarget(tx, true, watcher);
      return work(tx);
    }, options);
}

function watchTarget<T extends { collection: DocStore['collection'] }>(
  target: T,
  inTransaction: boolean,
  watcher: CollectionWatcher,
): void {
  const open = target.collection.bind(target);
  target.collection = <TDoc extends Document = Document>(name: string): Collection<TDoc> =>
    new Proxy(open<TDoc>(name), {
      get(object, property) {
        const value = Reflect.get(object, property, object);
        if (typeof value !== 'function' || typeof property !== 'string') return value;
        return watcher({ collection: name, method: property, inTransaction }) ?? value.bind(object);
      },
    });
}

/** A bus that only keeps what is published through it (an outbox's relay), in `published`. */
export function recordingBus(published: EventEnvelope[]): MessageBus {
  return {
    async publishEnvelope(envelope: EventEnvelope) {
      published.push(envelope);
    },
  } as unknown as MessageBus;
}
