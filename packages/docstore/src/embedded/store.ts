import { type FileHandle, open } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import Database from 'libsql';
import type { StoreLogger } from '../logger.js';
import type {
  Collection,
  DocStore,
  Document,
  NestingOptions,
  SqlAccess,
  SqlStatements,
  SqlValue,
  Transaction,
} from '../types.js';
import { type AmbientFrame, ambientFrame, runInFrame } from './ambient.js';
import { type CheckpointCounts, Checkpointer } from './checkpointer.js';
import { EmbeddedCollection, type TransactionScope } from './collection.js';
import { type DirectoryLock, lockDirectory } from './lock.js';
import { secureDataDirectory } from './permissions.js';
import { MIGRATIONS, type Migration, migrateSchema } from './schema.js';
import {
  type CatalogEntry,
  type Db,
  PLAN_PROBE_ROWS,
  type Statement,
  Table,
  type TableHost,
} from './table.js';

export interface EmbeddedStoreOptions {
  /** Where the data lives: `store.sqlite` (and its `-wal`, `-shm`) and the `LOCK` file. */
  dataDir: string;
  logger?: StoreLogger;
  /** How often documents past a TTL index's expiry are removed. Default 60 s, as MongoDB's TTL monitor. */
  ttlSweepIntervalMs?: number;
  /** SQLite page cache per connection, in KiB. Default 16 MiB. */
  cacheKiB?: number;
  /**
   * How many index entries a query plan first follows an equality for, to learn whether it is
   * selective (see Table's plan). Default PLAN_PROBE_ROWS; tests lower it to reach every plan with
   * few rows.
   */
  planProbeRows?: number;
  /** The layout's migrations (see schema.ts); tests give a longer list. Default MIGRATIONS. */
  migrations?: readonly Migration[];
}

export const STORE_FILE = 'store.sqlite';
/** Writes committed together at most; a batch this large commits before the end of its turn. */
const MAX_BATCH = 2000;
/**
 * The WAL size past which the writer checkpoints itself after a commit (see Checkpointer), so that
 * its next write rewinds the WAL; SQLite cuts the file back to this size then (journal_size_limit).
 */
const WAL_LIMIT_BYTES = 16 * 2 ** 20;

function openConnection(path: string, cacheKiB: number, readonly: boolean): Db {
  const db = new Database(path, readonly ? { readonly: true } : {});
  // libsql (0.5) ignores `readonly` and opens the file read-write: SQLite itself refuses writes here.
  if (readonly) db.pragma('query_only = ON');
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    // Checkpoints run on a thread of their own (see Checkpointer), not inside this connection's commits.
    db.pragma('wal_autocheckpoint = 0');
    // A WAL that grew under a burst is cut back to this size once it is reset.
    db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
  }
  // The writer's COMMIT does not wait for the disk: the store syncs the WAL itself, off the event
  // loop, before it acknowledges a batch (see #syncCommitted). Checkpoints still sync (NORMAL).
  db.pragma(readonly ? 'synchronous = FULL' : 'synchronous = NORMAL');
  db.pragma(`cache_size = -${cacheKiB}`);
  db.pragma('busy_timeout = 10000');
  db.pragma('temp_store = MEMORY');
  return db;
}

/**
 * The connection's page size in bytes. libsql's `pragma(name, { simple: true })` answers a row
 * object, not the value as better-sqlite3 does: read the column from the row.
 */
function pageSize(db: Db): number {
  const [row] = db.pragma('page_size') as { page_size?: unknown }[];
  const bytes = Number(row?.page_size);
  if (!Number.isInteger(bytes) || bytes <= 0)
    throw new Error(`Unexpected SQLite page size: ${String(row?.page_size)}`);
  return bytes;
}

/**
 * Opens (or creates) the embedded store in `dataDir`, its layout brought to the latest schema version
 * (see schema.ts); a store of a newer version than this code knows is refused.
 */
export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<EmbeddedDocStore> {
  const started = Date.now();
  const dataDir = resolvePath(options.dataDir);
  // Created 0700, or tightened to 0700 / 0600 when it exists: it holds tokens, hashes, personal data.
  await secureDataDirectory(dataDir, options.logger);
  const lock = await lockDirectory(dataDir);
  const connections: Db[] = [];
  try {
    const path = join(dataDir, STORE_FILE);
    const cacheKiB = options.cacheKiB ?? 16 * 1024;
    const writer = openConnection(path, cacheKiB, false);
    connections.push(writer);
    const migrated = migrateSchema(writer, dataDir, options.migrations ?? MIGRATIONS);
    if (migrated.length > 0)
      options.logger?.info({ dataDir, versions: migrated }, 'docstore schema migrated');
    const reader = openConnection(path, cacheKiB, true);
    connections.push(reader);
    const catalog = (
      writer.prepare('SELECT name, indexes, types, elements, columns FROM catalog').raw().all() as string[][]
    ).map(
      ([name, indexes, types, elements, columns]): CatalogEntry => ({
        name: name!,
        indexes: JSON.parse(indexes!),
        types: JSON.parse(types!),
        elements: JSON.parse(elements!),
        columns: JSON.parse(columns!),
      }),
    );
    const store = new EmbeddedDocStore(dataDir, path, writer, reader, catalog, lock, options);
    options.logger?.info(
      { dataDir, collections: catalog.length, ms: Date.now() - started },
      'docstore opened (embedded, SQLite)',
    );
    return store;
  } catch (error) {
    for (const db of connections) db.close();
    await lock.release();
    throw error;
  }
}

interface Batch {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
  writes: number;
}

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
  readonly #checkpointer: Checkpointer;
  readonly #walLimitFrames: number;
  readonly planProbeRows: number;
  #batch: Batch | null = null;
  #commitScheduled = false;
  /** Committed batches waiting for the WAL sync that acknowledges them. */
  readonly #committed: Batch[] = [];
  #syncing: Promise<void> | null = null;
  /** A batch waits for the sync under way, then commits. */
  #commitAfterSync = false;
  /** The WAL file, kept open for fdatasync. */
  #wal: FileHandle | null = null;
  /** What waits for the batch's commit (a new table becoming visible to the reader). */
  readonly #commitHooks: (() => void)[] = [];
  #depth = 0;
  #undo: (() => void)[] = [];
  /** The write mutex: held by an open transaction (and handed from one waiter to the next). */
  #locked = false;
  readonly #waiters: (() => void)[] = [];
  #transactionOpen = false;
  #closing: Promise<void> | null = null;
  #failure: Error | null = null;
  /** Each open transaction's state, for SQL writes that name the transaction (sql.write(work, tx)). */
  readonly #transactions = new WeakMap<Transaction, { readonly open: boolean }>();
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

    this.sql = this.#sqlAccess();
    this.#checkpointer = new Checkpointer(path, options.logger);
    this.#walLimitFrames = Math.floor(WAL_LIMIT_BYTES / pageSize(writer));
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
    if (!this.#tryLock()) await this.#lockWhenFree();
    let batch: Batch;
    let result: T;
    try {
      this.assertUsable();
      batch = this.#openBatch();
      const mark = this.#begin();
      this.#transactionOpen = true;
      let finished = false;
      const state = {
        get open() {
          return !finished;
        },
      };
      const tx: Transaction = {
        collection: <TDoc extends Document = Document>(name: string) => {
          this.table(name);
          return new EmbeddedCollection<TDoc>(name, this, state);
        },
      };
      this.#transactions.set(tx, state);
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
        this.#transactionOpen = false;
      }
      this.#end(mark, true);
      batch.writes++;
    } finally {
      this.#unlock();
      if (this.#batch) this.#scheduleCommit();
    }
    await batch.promise;
    return result;
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
      const tx: Transaction = {
        collection: <TDoc extends Document = Document>(name: string) => {
          this.table(name);
          return new EmbeddedCollection<TDoc>(name, this, scope);
        },
      };
      this.#transactions.set(tx, scope);
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
      if (!this.#tryLock()) await this.#lockWhenFree();
      if (this.#batch && !this.#failure) this.#commit();
      while (this.#syncing) await this.#syncing;
      // The writer's close checkpoints what is left and removes the WAL: nobody else may be at it.
      await this.#checkpointer.close();
      await this.#wal?.close();
      this.#reader.close();
      this.writer.close();
    } finally {
      await this.#lock.release();
    }
    this.#logger?.info({ dataDir: this.#dataDir }, 'docstore closed');
  }

  assertUsable(): void {
    if (this.#closing) throw new Error('The docstore is closed');
    if (this.#failure) {
      throw new Error(
        `The docstore stopped accepting work (${this.#failure.message}); restart the process to recover`,
        {
          cause: this.#failure,
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
    this.#commitHooks.push(done);
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
    const waited = !this.#tryLock();
    if (waited) await this.#lockWhenFree();
    let batch: Batch;
    let result: T;
    try {
      this.assertUsable();
      batch = this.#openBatch();
      result = work();
      batch.writes++;
    } finally {
      this.#unlock();
    }
    if (batch.writes >= MAX_BATCH) this.#commit();
    else this.#scheduleCommit();
    await batch.promise;
    return result;
  }

  #tryLock(): boolean {
    if (this.#locked || this.#waiters.length > 0) return false;
    this.#locked = true;
    return true;
  }

  #lockWhenFree(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #unlock(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#locked = false;
  }

  #openBatch(): Batch {
    if (this.#batch) return this.#batch;
    this.writer.exec('BEGIN IMMEDIATE');
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A failed commit rejects every waiting write; nobody may be waiting yet.
    promise.catch(() => undefined);
    this.#batch = { promise, resolve, reject, writes: 0 };
    return this.#batch;
  }

  #scheduleCommit(): void {
    if (this.#commitScheduled) return;
    this.#commitScheduled = true;
    setImmediate(() => {
      this.#commitScheduled = false;
      // An open transaction keeps the batch open; it schedules the commit when it ends. While the
      // WAL is being synced, the batch grows instead: it commits when the sync ends, so there is at
      // most one commit per sync and hot pages are written once for many writes (group commit).
      if (this.#transactionOpen || !this.#batch) return;
      if (this.#syncing) this.#commitAfterSync = true;
      else this.#commit();
    });
  }

  #commit(): void {
    const batch = this.#batch;
    if (!batch) return;
    this.#batch = null;
    try {
      this.writer.exec('COMMIT');
    } catch (error) {
      this.#failure = new Error(`The docstore could not commit: ${String(error)}`, { cause: error });
      this.#logger?.error({ err: error, dataDir: this.#dataDir }, 'docstore commit failed');
      try {
        this.writer.exec('ROLLBACK');
      } catch {
        // Already rolled back.
      }
      batch.reject(this.#failure);
      return;
    }
    for (const done of this.#commitHooks.splice(0)) done();
    if (this.#checkpointer.takeForegroundTurn(this.#walLimitFrames)) this.#checkpointNow();
    this.#checkpointer.request();
    this.#committed.push(batch);
    this.#syncCommitted();
  }

  #sqlAccess(): SqlAccess {
    const on = (db: Db): SqlStatements => ({
      run: (sql, params = []) => {
        const { changes } = this.statement(db, sql).run(params as SqlValue[]) as { changes: number };
        return { changes };
      },
      get: (sql, params = []) => this.statement(db, sql).get(params as SqlValue[]) as unknown[] | undefined,
      all: (sql, params = []) => this.statement(db, sql).all(params as SqlValue[]) as unknown[][],
    });
    const writer = on(this.writer);
    const reader = on(this.#reader);
    const transactionState = (tx: Transaction | undefined) => {
      if (!tx) return null;
      const state = this.#transactions.get(tx);
      if (!state) throw new Error('Not a transaction of this store');
      return state;
    };
    return {
      write: async (work, tx) => {
        const state = transactionState(tx);
        return this.write(() => this.atomically(() => work(writer)), state);
      },
      execute: async (sql, params, tx) => {
        const state = transactionState(tx);
        return this.write(() => writer.run(sql, params), state);
      },
      read: (work) => {
        this.assertUsable();
        return work(reader);
      },
    };
  }

  /** How many checkpoints ran, and by whom (tests, diagnostics). */
  checkpoints(): CheckpointCounts {
    return this.#checkpointer.counts();
  }

  /** The writer's own checkpoint: when the WAL outgrew its limit (see Checkpointer). */
  #checkpointNow(): void {
    try {
      this.writer.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      this.#logger?.warn({ err: error, dataDir: this.#dataDir }, 'docstore checkpoint failed');
    }
  }

  /**
   * Acknowledges committed batches once the WAL that holds them is on disk. One fdatasync at a time,
   * on libuv's thread pool, so the event loop goes on meanwhile; the batches committed while one runs
   * share the next (group commit). A failed sync fails the store, as a failed commit does.
   */
  #syncCommitted(): void {
    if (this.#syncing || this.#committed.length === 0) return;
    const batches = this.#committed.splice(0);
    this.#syncing = this.#syncWal()
      .then(
        () => {
          for (const batch of batches) batch.resolve();
        },
        (error: unknown) => {
          this.#failure ??= new Error(`The docstore could not sync its log: ${String(error)}`, {
            cause: error,
          });
          this.#logger?.error({ err: error, dataDir: this.#dataDir }, 'docstore sync failed');
          for (const batch of batches) batch.reject(this.#failure);
        },
      )
      .finally(() => {
        this.#syncing = null;
        if (this.#commitAfterSync) {
          this.#commitAfterSync = false;
          if (!this.#transactionOpen && this.#batch && !this.#failure) this.#commit();
        }
        this.#syncCommitted();
      });
  }

  async #syncWal(): Promise<void> {
    this.#wal ??= await open(`${this.#path}-wal`, 'r+');
    await this.#wal.datasync();
  }

  #removeExpired(): void {
    if (this.#closing || this.#failure || this.#locked) return;
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
