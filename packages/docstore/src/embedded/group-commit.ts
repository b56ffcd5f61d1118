import { type FileHandle, open } from 'node:fs/promises';
import type { StoreLogger } from '../logger.js';
import { type CheckpointCounts, Checkpointer } from './checkpointer.js';
import { pageSize, WAL_LIMIT_BYTES } from './connection.js';
import type { Db } from './host.js';

/** Writes that commit together; the promise settles once their commit is on disk (or failed). */
export interface Batch {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
  writes: number;
}

/**
 * The writer's batch transaction: opened by the first write, committed once per event-loop turn, at
 * most once per WAL sync (group commit), and acknowledged once the WAL that holds it is synced to disk
 * (fdatasync off the event loop). Checkpoints run on a thread of their own (Checkpointer). A failed
 * commit or sync fails the store (`failure`).
 */
export class GroupCommit {
  readonly #writer: Db;
  readonly #path: string;
  readonly #dataDir: string;
  readonly #logger: StoreLogger | undefined;
  readonly #checkpointer: Checkpointer;
  readonly #walLimitFrames: number;
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
  /** A transaction is open: it keeps the batch open, and schedules the commit when it ends. */
  transactionOpen = false;
  /** Why the store stopped accepting work: a commit or a sync failed. */
  failure: Error | null = null;

  constructor(writer: Db, path: string, dataDir: string, logger: StoreLogger | undefined) {
    this.#writer = writer;
    this.#path = path;
    this.#dataDir = dataDir;
    this.#logger = logger;
    this.#checkpointer = new Checkpointer(path, logger);
    this.#walLimitFrames = Math.floor(WAL_LIMIT_BYTES / pageSize(writer));
  }

  get hasBatch(): boolean {
    return this.#batch !== null;
  }

  /** Runs `done` once the current batch is committed. */
  onCommit(done: () => void): void {
    this.#commitHooks.push(done);
  }

  /** The open batch, begun now when there is none. */
  openBatch(): Batch {
    if (this.#batch) return this.#batch;
    this.#writer.exec('BEGIN IMMEDIATE');
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

  scheduleCommit(): void {
    if (this.#commitScheduled) return;
    this.#commitScheduled = true;
    setImmediate(() => {
      this.#commitScheduled = false;
      // An open transaction keeps the batch open; it schedules the commit when it ends. While the
      // WAL is being synced, the batch grows instead: it commits when the sync ends, so there is at
      // most one commit per sync and hot pages are written once for many writes (group commit).
      if (this.transactionOpen || !this.#batch) return;
      if (this.#syncing) this.#commitAfterSync = true;
      else this.commit();
    });
  }

  commit(): void {
    const batch = this.#batch;
    if (!batch) return;
    this.#batch = null;
    try {
      this.#writer.exec('COMMIT');
    } catch (error) {
      this.failure = new Error(`The docstore could not commit: ${String(error)}`, { cause: error });
      this.#logger?.error({ err: error, dataDir: this.#dataDir }, 'docstore commit failed');
      try {
        this.#writer.exec('ROLLBACK');
      } catch {
        // Already rolled back.
      }
      batch.reject(this.failure);
      return;
    }
    for (const done of this.#commitHooks.splice(0)) done();
    if (this.#checkpointer.takeForegroundTurn(this.#walLimitFrames)) this.#checkpointNow();
    this.#checkpointer.request();
    this.#committed.push(batch);
    this.#syncCommitted();
  }

  /** Commits what is open (unless the store failed), then waits for the syncs and the checkpointer. */
  async close(): Promise<void> {
    if (this.#batch && !this.failure) this.commit();
    while (this.#syncing) await this.#syncing;
    // The writer's close checkpoints what is left and removes the WAL: nobody else may be at it.
    await this.#checkpointer.close();
    await this.#wal?.close();
  }

  /** How many checkpoints ran, and by whom (tests, diagnostics). */
  checkpoints(): CheckpointCounts {
    return this.#checkpointer.counts();
  }

  /** The writer's own checkpoint: when the WAL outgrew its limit (see Checkpointer). */
  #checkpointNow(): void {
    try {
      this.#writer.pragma('wal_checkpoint(PASSIVE)');
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
          this.failure ??= new Error(`The docstore could not sync its log: ${String(error)}`, {
            cause: error,
          });
          this.#logger?.error({ err: error, dataDir: this.#dataDir }, 'docstore sync failed');
          for (const batch of batches) batch.reject(this.failure);
        },
      )
      .finally(() => {
        this.#syncing = null;
        if (this.#commitAfterSync) {
          this.#commitAfterSync = false;
          if (!this.transactionOpen && this.#batch && !this.failure) this.commit();
        }
        this.#syncCommitted();
      });
  }

  async #syncWal(): Promise<void> {
    this.#wal ??= await open(`${this.#path}-wal`, 'r+');
    await this.#wal.datasync();
  }
}
