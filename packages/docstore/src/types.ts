/**
 * The subset of the MongoDB collection API that the services use. The MongoDB implementation passes
 * calls through to the official driver; the embedded one gives the same answers (query, update and
 * aggregation semantics from mingo). Documents use string `_id`s (UUIDs), never ObjectIds.
 */
export type Document = { _id: string } & Record<string, unknown>;
export type Filter = Record<string, unknown>;
export type UpdateSpec = Record<string, unknown>;
export type SortSpec = Record<string, 1 | -1>;
export type Projection = Record<string, 0 | 1>;

export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  projection?: Projection;
}

export interface UpdateOptions {
  upsert?: boolean;
}

export interface FindOneAndUpdateOptions {
  upsert?: boolean;
  /** Default 'after' (unlike the driver's default, which surprises everyone). */
  returnDocument?: 'before' | 'after';
  sort?: SortSpec;
  projection?: Projection;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId: string | null;
}

export interface DeleteResult {
  deletedCount: number;
}

export interface IndexOptions {
  unique?: boolean;
  name?: string;
  /** TTL: documents whose indexed date field is older than this are removed. */
  expireAfterSeconds?: number;
  sparse?: boolean;
  /**
   * Embedded store only (stripped for MongoDB): keep a trigram index of the field's text, so that a
   * literal substring regex of 3 or more characters (an escaped search text) is answered from it
   * instead of by reading every document. Single-field indexes only.
   */
  substring?: boolean;
}

export type IndexKeys = Record<string, 1 | -1>;

export interface Collection<TDoc extends Document = Document> {
  readonly name: string;
  insertOne(doc: TDoc): Promise<void>;
  insertMany(docs: TDoc[]): Promise<void>;
  findOne(filter: Filter, options?: Omit<FindOptions, 'limit'>): Promise<TDoc | null>;
  find(filter: Filter, options?: FindOptions): Promise<TDoc[]>;
  /** The same as find, one document at a time, without holding the result set in memory. */
  stream(filter: Filter, options?: FindOptions): AsyncIterable<TDoc>;
  countDocuments(filter?: Filter): Promise<number>;
  updateOne(filter: Filter, update: UpdateSpec, options?: UpdateOptions): Promise<UpdateResult>;
  updateMany(filter: Filter, update: UpdateSpec): Promise<UpdateResult>;
  findOneAndUpdate(
    filter: Filter,
    update: UpdateSpec,
    options?: FindOneAndUpdateOptions,
  ): Promise<TDoc | null>;
  replaceOne(filter: Filter, replacement: TDoc, options?: UpdateOptions): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<DeleteResult>;
  deleteMany(filter: Filter): Promise<DeleteResult>;
  findOneAndDelete(filter: Filter): Promise<TDoc | null>;
  aggregate<TResult = Document>(pipeline: Record<string, unknown>[]): Promise<TResult[]>;
  /** Idempotent: creating an index that exists (same keys and options) is a no-op. */
  createIndex(keys: IndexKeys, options?: IndexOptions): Promise<string>;
}

/** How the transactions opened inside a transaction run (embedded store, chained stages). */
export interface NestingOptions {
  /**
   * Inside an ambient transaction only (elsewhere ignored): the transactions `work` opens run in
   * place, with no savepoint of their own. A savepoint costs SQLite statements and a sub-journal copy
   * of every page first touched in it, and a chained stage opens several. One that throws calls this
   * first: its writes are not undone alone, so the caller must undo the whole of `work` (by
   * throwing out of it, which rolls back the savepoint `work` runs in).
   */
  inlineNested?: (error: unknown) => void;
}

export interface DocStore {
  readonly kind: 'mongodb' | 'embedded';
  collection<TDoc extends Document = Document>(name: string): Collection<TDoc>;
  /** Resolves when the store answers; for readiness checks. */
  ping(): Promise<void>;
  /** Flushes and closes; further calls reject. */
  close(): Promise<void>;
  /** True where `transaction` is atomic: the embedded store, and MongoDB replica sets / sharded clusters. */
  readonly transactional: boolean;
  /**
   * Runs `work`; every write it makes through `tx.collection(...)` commits together or none does
   * (work throws → rolled back, the error rethrown). Reads through `tx` see the transaction's own writes;
   * reads elsewhere never see them before the commit. Keep `work` short: no network I/O inside.
   * Embedded: other writes wait while it is open, so `work` must not write through the store itself.
   */
  transaction<T>(work: (tx: Transaction) => Promise<T>, options?: NestingOptions): Promise<T>;
  /**
   * Embedded store only: a transaction that the code `work` calls joins without being handed `tx`
   * (chained stages: every stage's code runs in the transaction of the batch). Inside `work`'s own
   * async calls, writes and reads through the store's collections run in it (reads see its writes),
   * and `transaction()` opens a savepoint in it: rolled back alone when its work throws. Code that
   * leaves `work` (a timer, a task still running after it) no longer joins it.
   */
  ambientTransaction?<T>(work: (tx: Transaction) => Promise<T>, options?: NestingOptions): Promise<T>;
  /**
   * Embedded store only: SQL on tables of the caller's own beside the collections, in the same
   * commits (the in-process bus keeps its queues there). Undefined on MongoDB.
   */
  readonly sql?: SqlAccess;
}

/** A parameter of a SQL statement. */
export type SqlValue = string | number | bigint | null;

/** Statements on one connection; rows come as arrays of column values, in the SELECT's order. */
export interface SqlStatements {
  run(sql: string, params?: readonly SqlValue[]): { changes: number };
  get(sql: string, params?: readonly SqlValue[]): unknown[] | undefined;
  all(sql: string, params?: readonly SqlValue[]): unknown[][];
}

/**
 * SQL access to the embedded store's own database file, for tables named by the caller (quote
 * their names; keep them apart from the collections' `d:`, `u:`, `m:`, `s:` and `i:` names).
 * Writes join the store's group commit: they resolve once durable, like a collection's writes.
 */
export interface SqlAccess {
  /**
   * Runs `work` on the writer as one write: atomic (a savepoint; `work` throws → undone, rethrown).
   * With `tx` (a transaction of this store, still open) it belongs to that transaction and
   * resolves at once; otherwise it resolves once its commit is on disk.
   */
  write<T>(work: (sql: SqlStatements) => T, tx?: Transaction): Promise<T>;
  /** One statement as one write, without the savepoint (a statement is atomic on its own). */
  execute(sql: string, params?: readonly SqlValue[], tx?: Transaction): Promise<{ changes: number }>;
  /** Runs `work` on the read connection: it sees committed writes only. */
  read<T>(work: (sql: SqlStatements) => T): T;
}

/** The collections of an open transaction (see DocStore.transaction). */
export interface Transaction {
  collection<TDoc extends Document = Document>(name: string): Collection<TDoc>;
}

/** Thrown by both implementations when a unique index is violated; `code` is MongoDB's 11000. */
export class DuplicateKeyError extends Error {
  readonly code = 11000;
  constructor(
    message: string,
    readonly keyValue?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DuplicateKeyError';
  }
}

export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
