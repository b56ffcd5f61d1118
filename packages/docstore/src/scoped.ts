import type { Collection, DocStore, Document, Transaction } from './types.js';

/** The store each scoped store opens its collections on (so the bus and outboxes know it as the same store). */
const scopedStores = new WeakMap<DocStore, DocStore>();
/** The same for transactions: SQL that joins a transaction (the bus's queue) names the store's own. */
const scopedTransactions = new WeakMap<Transaction, Transaction>();

/** Thrown when a service opens a collection it did not declare: another service's data. */
export class ForeignCollectionError extends Error {
  constructor(owner: string, name: string) {
    super(`The ${owner} service does not own the collection "${name}" (declare it among its collections)`);
    this.name = 'ForeignCollectionError';
  }
}

/**
 * The store of one service: `store` with only the collections `owner` declared, in and out of
 * transactions. Opening any other throws ForeignCollectionError: a service reads and writes its own
 * data and learns the rest from events (ARCHITECTURE.md). Embedded, every service's scoped store
 * opens its collections on the one shared store, so their transactions still join one another.
 */
export function scopeStore(store: DocStore, owner: string, collections: Iterable<string>): DocStore {
  const owned = new Set(collections);
  const check = (name: string): string => {
    if (!owned.has(name)) throw new ForeignCollectionError(owner, name);
    return name;
  };
  const scopeTransaction = (tx: Transaction): Transaction => {
    const scopedTx: Transaction = {
      collection: <TDoc extends Document>(name: string): Collection<TDoc> => tx.collection<TDoc>(check(name)),
    };
    scopedTransactions.set(scopedTx, unscopedTransaction(tx));
    return scopedTx;
  };
  const base = unscopedStore(store);
  const { ambientTransaction } = store;
  const scoped: DocStore = {
    kind: store.kind,
    transactional: store.transactional,
    collection: <TDoc extends Document>(name: string) => store.collection<TDoc>(check(name)),
    ping: () => store.ping(),
    close: () => store.close(),
    transaction: (work) => store.transaction((tx) => work(scopeTransaction(tx))),
    ...(ambientTransaction
      ? {
          ambientTransaction: <T>(work: (tx: Transaction) => Promise<T>) =>
            ambientTransaction.call(store, (tx) => work(scopeTransaction(tx))) as Promise<T>,
        }
      : {}),
  };
  scopedStores.set(scoped, base);
  return scoped;
}

/** The store a scoped store opens its collections on; `store` itself when it is not scoped. */
export function unscopedStore(store: DocStore): DocStore {
  return scopedStores.get(store) ?? store;
}

/** The transaction of the store beneath a scoped store's transaction; `tx` itself when it is not scoped. */
export function unscopedTransaction(tx: Transaction): Transaction {
  return scopedTransactions.get(tx) ?? tx;
}
