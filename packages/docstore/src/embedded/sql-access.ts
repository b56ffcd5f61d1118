import type { SqlAccess, SqlStatements, SqlValue, Transaction } from '../types.js';
import type { TransactionScope } from './collection.js';
import type { Db } from './host.js';
import type { EmbeddedDocStore } from './store.js';

/**
 * The store's SqlAccess: statements on the writer, inside a write of the store's batch (or of the
 * transaction named), and on the reader for committed data.
 */
export function sqlAccess(
  store: EmbeddedDocStore,
  transactions: WeakMap<Transaction, TransactionScope>,
): SqlAccess {
  const on = (db: Db): SqlStatements => ({
    run: (sql, params = []) => {
      const { changes } = store.statement(db, sql).run(params as SqlValue[]) as { changes: number };
      return { changes };
    },
    get: (sql, params = []) => store.statement(db, sql).get(params as SqlValue[]) as unknown[] | undefined,
    all: (sql, params = []) => store.statement(db, sql).all(params as SqlValue[]) as unknown[][],
  });
  const writer = on(store.writer);
  const reader = on(store.reader);
  const transactionState = (tx: Transaction | undefined) => {
    if (!tx) return null;
    const state = transactions.get(tx);
    if (!state) throw new Error('Not a transaction of this store');
    return state;
  };
  return {
    write: async (work, tx) => {
      const state = transactionState(tx);
      return store.write(() => store.atomically(() => work(writer)), state);
    },
    execute: async (sql, params, tx) => {
      const state = transactionState(tx);
      return store.write(() => writer.run(sql, params), state);
    },
    read: (work) => {
      store.assertUsable();
      return work(reader);
    },
  };
}
