import type { StoreLogger } from '../logger.js';
import type { Collection, DocStore, Document, NestingOptions, SqlAccess, Transaction } from '../types.js';
import { type AmbientFrame, ambientFrame, runInFrame } from './ambient.js';
import type { CatalogEntry } from './catalog.js';
import type { CheckpointCounts } from './checkpointer.js';
import { EmbeddedCollection, type TransactionScope } from './collection.js';
import { openConnection } from './connection.js';
import { type Batch, GroupCommit } from './group-commit.js';
import type { Db, Statement, TableHost } from './host.js';
import type { DirectoryLock } from './lock.js';
import type { EmbeddedStoreOptions } from './open.js';
import { PLAN_PROBE_ROWS } from './query-plan.js';
import { sqlAccess } from './sql-access.js';
import { Table } from './table.js';
import { WriteMutex } from './write-mutex.js';

/** Writes committed together at most; a batch this large commits before the end of its turn. */
const MAX_BATCH = 2000;

/**
 * The embedded implementation of DocStore on SQLite. Writes run at once, synchronously, on the writer
 * connection, inside a batch transaction that commits once per event-loop turn (group commit); a
 * failing write undoes only itself (one statement, or a savepoint when it takes several). A write's
 * promise resolves once its batch is committed and the WAL holding it is synced to disk (fdatasync
 * off the event loop). Checkpoints run on a thread of their own (Checkpointer). Reads outside a
 * transaction run on a read-only connection and see committed data only.
 */
export class EmbeddedDocStore implements DocStore, TableHost {
  readonly kind = 'embedded' as const;
  readonly transactional = true;
  readonly writer: Db;
  readonly #reader: Db;
  readonly #path: string;
  readonly #dataDir: string;
  readonly #lock: DirectoryLock;
  readonly #logger: StoreLogger | undefined;

  readonly #tables = new Map<string, Table>();
  readonly #statements = new Map<Db, Map<string, Statement>>();
  readonly #ttlTimer: NodeJS.Timeout;
  readonly #commits: GroupCommit;
  readonly planProbeRows: number;
  #depth = 0;
  #undo: (() => void)[] = [];
  /** Held by an open transaction or a write. */
  readonly #mutex = new WriteMutex();
  #closing: Promise<void> | null = null;
  /** Each open transaction's state, for SQL writes that name the transaction (sql.write(work, tx)). */
  readonly #transactions = new WeakMap<Transaction, TransactionScope>();
  readonly sql: SqlAccess;

  constructor(
    dataDir: string,
    path: string,
    writer: Db,
    reader: Db,
    catalog: CatalogEntry[],
    lock: DirectoryLock,
    options: EmbeddedStoreOptions,
  ) {
    this.#dataDir = dataDir;
    this.#path = path;
    this.writer = writer;
    this.#reader = reader;
    this.#lock = lock;
    this.#logger = options.logger;
    this.planProbeRows = options.planProbeRows ?? PLAN_PROBE_ROWS;

    this.sql = sqlAccess(this, this.#transactions);
    this.#commits = new GroupCommit(writer, path, dataDir, options.logger);
    for (const entry of catalog) this.#tables.set(entry.name, new Table(this, entry, entry.name));
    this.#ttlTimer = setInterval(() => this.#removeExpired(), options.ttlSweepIntervalMs ?? 60_000).unref();
  }

  collection<TDoc extends Document = Document>(name: string): Collection<TDoc> {
    this.table(name);
    return new EmbeddedCollection<TDoc>(name, this, null);
  }

  async ping(): Promise<void> {
    this.assertUsable();
    this.#reader.prepare('SELECT 1').get();
  }

  /**
   * Runs `work` with collections whose writes commit together or not at all. Other writes wait
   * while it is open; reads elsewhere do not see its writes before the commit. A write through the
   * store itself (not `tx`) inside `work` would wait for the transaction: do not.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>, options?: NestingOptions): Promise<T> {
    const frame = ambientFrame(this);
    if (frame) return this.#savepoint(frame, work, options?.inlineNested);
    return this.#transaction(work, false);
  }

  /** See DocStore.ambientTransaction; inside one already, a savepoint of it. */
  ambientTransaction<T>(work: (tx: Transaction) => Promise<T>, options?: NestingOptions): Promise<T> {
    const frame = ambientFrame(this);
    if (frame) return this.#savepoint(frame, work, options?.inlineNested);
    return this.#transaction(work, true, options?.inlineNested);
  }

  async #transaction<T>(
    work: (tx: Transaction) => Promise<T>,
    ambient: boolean,
    inlineNested?: (error: unknown) => void,
  ): Promise<T> {
    this.assertUsable();
    if (!this.#mutex.tryLock()) await this.#mutex.lockWhenFree();
    let batch: Batch;
    let result: T;
    try {
      this.assertUsable();
      batch = this.#commits.openBatch();
      const mark = this.#begin();
      this.#commits.transactionOpen = true;
      let finished = false;
      const state = {
        get open() {
          return !finished;
        },
      };
      const tx = this.#transactionIn(state);
      try {
        result = ambient
          ? await runInFrame(this.#frame(state, tx, inlineNested), () => work(tx))
          : await work(tx);
      } catch (error) {
        finished = true;
        this.#end(mark, false);
        throw error;
      } finally {
        finished = true;
        this.#commits.transactionOpen = false;
      }
      this.#end(mark, true);
      batch.writes++;
    } finally {
      this.#mutex.unlock();
      if (this.#commits.hasBatch) this.#commits.scheduleCommit();
    }
    await batch.promise;
    return result;
  }

  /** A transaction whose collections write in `scope`, known to sql.write. */
  #transactionIn(scope: TransactionScope): Transaction {
    const tx: Transaction = {
      collection: <TDoc extends Document = Document>(name: string) => {
        this.table(name);
        return new EmbeddedCollection<TDoc>(name, this, scope);
      },
    };
    this.#transactions.set(tx, scope);
    return tx;
  }

  #frame(scope: TransactionScope, tx: Transaction, inlineNested?: (error: unknown) => void): AmbientFrame {
    return { host: this, scope, tx, turn: Promise.resolve(), inlineNested };
  }

  /**
   * A transaction inside an ambient one: a savepoint, undone alone when `work` throws. The savepoints
   * opened in one frame run one after another (SQLite's savepoints are a stack).
   */
  async #savepoint<T>(
    parent: AmbientFrame,
    work: (tx: Transaction) => Promise<T>,
    inlineNested?: (error: unknown) => void,
  ): Promise<T> {
    const previous = parent.turn;
    let done!: () => void;
    parent.turn = new Promise<void>((resolve) => {
      done = resolve;
    });
    await previous;
    try {
      this.assertUsable();
      if (!parent.scope.open) throw new Error('The transaction is over: write through the store instead');
      if (parent.inlineNested) return await this.#inPlace(parent.tx, parent.inlineNested, work);
      const mark = this.#begin();
      let finished = false;
      const scope = {
        get open() {
          return !finished && parent.scope.open;
        },
      };
      const tx = this.#transactionIn(scope);
      let result: T;
      try {
        result = await runInFrame(this.#frame(scope, tx, inlineNested), () => work(tx));
      } catch (error) {
        finished = true;
        this.#end(mark, false);
        throw error;
      }
      finished = true;
      this.#end(mark, true);
      return result;
    } finally {
      done();
    }
  }

  /** A transaction inside a frame that runs them in place (NestingOptions.inlineNested). */
  async #inPlace<T>(
    tx: Transaction,
    failed: (error: unknown) => void,
    work: (tx: Transaction) => Promise<T>,
  ): Promise<T> {
    try {
      return await work(tx);
    } catch (error) {
      failed(error);
      throw error;
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    clearInterval(this.#ttlTimer);
    try {
      // An open transaction finishes first (its work may still write).
      if (!this.#mutex.tryLock()) await this.#mutex.lockWhenFree();
      await this.#commits.close();
      this.#reader.close();
      this.writer.close();
    } finally {
      await this.#lock.release();
    }
    this.#logger?.info({ dataDir: this.#dataDir }, 'docstore closed');
  }

  assertUsable(): void {
    if (this.#closing) throw new Error('The docstore is closed');
    const failure = this.#commits.failure;
    if (failure) {
      throw new Error(
        `The docstore stopped accepting work (${failure.message}); restart the process to recover`,
        {
          cause: failure,
        },
      );
    }
  }

  table(name: string): Table {
    let table = this.#tables.get(name);
    if (!table) {
      if (!name || name.includes('$') || name.includes('\0'))
        throw new Error(`Invalid collection name: "${name}"`);
      table = new Table(this, null, name);
      this.#tables.set(name, table);
    }
    return table;
  }

  get reader(): Db {
    return this.#reader;
  }

  /** A read-only connection of its own, for a stream that stays open across awaits. */
  openReadConnection(): Db {
    return openConnection(this.#path, 2048, true);
  }

  statement(db: Db, sql: string): Statement {
    let cache = this.#statements.get(db);
    if (!cache) {
      cache = new Map();
      this.#statements.set(db, cache);
    }
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= 500) cache.clear();
      statement = db.prepare(sql) as Statement;
      // Rows as arrays (without the binding's _metadata); only statements that return data have rows.
      if (statement.reader) statement.raw();
      cache.set(sql, statement);
    }
    return statement;
  }

  forget(db: Db): void {
    this.#statements.delete(db);
  }

  atomically<T>(work: () => T): T {
    const mark = this.#begin();
    try {
      const result = work();
      this.#end(mark, true);
      return result;
    } catch (error) {
      this.#end(mark, false);
      throw error;
    }
  }

  onRollback(undo: () => void): void {
    // Outside every savepoint nothing rolls back but a failed commit, which fails the whole store.
    if (this.#depth > 0) this.#undo.push(undo);
  }

  onCommit(done: () => void): void {
    this.#commits.onCommit(done);
  }

  #begin(): number {
    // Prepared once and reused: every write opens and releases one or two savepoints.
    this.statement(this.writer, `SAVEPOINT s${this.#depth++}`).run();
    return this.#undo.length;
  }

  #end(mark: number, keep: boolean): void {
    const name = `s${--this.#depth}`;
    if (keep) {
      this.statement(this.writer, `RELEASE ${name}`).run();
      if (this.#depth === 0) this.#undo.length = 0;
      return;
    }
    this.writer.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
    while (this.#undo.length > mark) this.#undo.pop()?.();
  }

  /**
   * Runs one write now (when no transaction holds the store), in the current batch,
   * and resolves with its result once the batch is committed. `inTransaction`: the write belongs to
   * the open transaction, runs at once and resolves at once.
   */
  async write<T>(work: () => T, inTransaction: { readonly open: boolean } | null): Promise<T> {
    this.assertUsable();
    // No savepoint around the write: each table write is atomic on its own (Table.insert and the
    // others), and a write of several documents (insertMany, updateMany) is not atomic, as in MongoDB.
    const scope = inTransaction ?? ambientFrame(this)?.scope;
    if (scope) {
      if (!scope.open) throw new Error('The transaction is over: write through the store instead');
      return work();
    }
    const waited = !this.#mutex.tryLock();
    if (waited) await this.#mutex.lockWhenFree();
    let batch: Batch;
    let result: T;
    try {
      this.assertUsable();
      batch = this.#commits.openBatch();
      result = work();
      batch.writes++;
    } finally {
      this.#mutex.unlock();
    }
    if (batch.writes >= MAX_BATCH) this.#commits.commit();
    else this.#commits.scheduleCommit();
    await batch.promise;
    return result;
  }

  /** How many checkpoints ran, and by whom (tests, diagnostics). */
  checkpoints(): CheckpointCounts {
    return this.#commits.checkpoints();
  }

  #removeExpired(): void {
    if (this.#closing || this.#commits.failure || this.#mutex.locked) return;
    const now = Date.now();
    for (const table of this.#tables.values()) {
      for (const index of table.indexes) {
        if (index.expireAfterSeconds === undefined) continue;
        const rows = [...table.expired(this.writer, index, now)];
        if (rows.length === 0) continue;
        this.write(() => {
          for (const row of rows) table.remove(row);
        }, null).catch((error: unknown) => {
          this.#logger?.error({ err: error, collection: table.name }, 'docstore TTL sweep failed');
        });
      }
    }
  }
}
