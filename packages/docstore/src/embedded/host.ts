import type Database from 'libsql';
import type { Document } from '../types.js';

export type Db = Database.Database;
export type Statement = Database.Statement<unknown[]>;

/** A stored document and its row id. */
export interface Row {
  rid: number;
  doc: Document;
}

/** What a table needs from the store: statements, nested savepoints, undo of its memory on rollback. */
export interface TableHost {
  readonly writer: Db;
  statement(db: Db, sql: string): Statement;
  /** Runs `work` in a savepoint of the writer: if it throws, its SQL and registered undos roll back. */
  atomically<T>(work: () => T): T;
  onRollback(undo: () => void): void;
  /** Runs `done` once the current batch is committed. */
  onCommit(done: () => void): void;
  /** How many rows a query plan's probe of an equality counts at most (see QueryPlanner). */
  readonly planProbeRows: number;
}
