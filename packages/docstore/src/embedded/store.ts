import { mkdir, open } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { StoreLogger } from '../logger.js';
import type { Collection, DocStore, Document } from '../types.js';
import { decodeJson, encodeJson } from './codec.js';
import { type Change, EmbeddedCollection, type StoreContext } from './collection.js';
import { CollectionState } from './collection-state.js';
import { readLines } from './files.js';
import type { IndexDefinition } from './indexes.js';
import { type DirectoryLock, lockDirectory } from './lock.js';
import { readSnapshot, writeSnapshot } from './snapshot.js';
import { listSegments, removeSegmentsBefore, segmentPath, WriteAheadLog } from './wal.js';

export interface EmbeddedStoreOptions {
  /** Where the data lives: a lock file, the snapshot and the write-ahead log segments. */
  dataDir: string;
  logger?: StoreLogger;
  /** Log size (bytes) at which the store writes a new snapshot and starts a new log. Default 64 MiB. */
  compactAfterBytes?: number;
  /** How often documents past a TTL index's expiry are removed. Default 60 s, as MongoDB's TTL monitor. */
  ttlSweepIntervalMs?: number;
}

/** Opens (or creates) the embedded store in `dataDir`: snapshot plus log replayed into memory. */
export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<EmbeddedDocStore> {
  const started = Date.now();
  const dataDir = resolvePath(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const lock = await lockDirectory(dataDir);
  try {
    const loaded = new Map<string, LoadedCollection>();
    const snapshot = await readSnapshot(dataDir);
    for (const { name, indexes, documents } of snapshot?.collections ?? []) {
      loaded.set(name, {
        documents: new Map(documents.map((document) => [document._id, document])),
        indexes,
      });
    }
    const walSequence = await replayLog(dataDir, snapshot?.walSequence ?? 1, loaded, options.logger);
    // Indexes are built once everything is loaded: one sort per field instead of one insert per write.
    const collections = new Map<string, CollectionState>();
    for (const [name, { documents, indexes }] of loaded) {
      const state = new CollectionState(name);
      for (const document of documents.values()) state.documents.set(document._id, document);
      for (const index of indexes) state.addIndex(index);
      collections.set(name, state);
    }
    const wal = await WriteAheadLog.open(dataDir, walSequence);
    const documents = [...collections.values()].reduce((total, state) => total + state.documents.size, 0);
    options.logger?.info({ dataDir, documents, ms: Date.now() - started }, 'docstore opened (embedded)');
    return new EmbeddedDocStore(dataDir, collections, wal, lock, options);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * The embedded implementation of DocStore: every collection in memory, every acknowledged write in the
 * write-ahead log on disk (fsynced), compacted now and then into a snapshot.
 */
export class EmbeddedDocStore implements DocStore {
  readonly kind = 'embedded' as const;
  readonly #dataDir: string;
  readonly #collections: Map<string, CollectionState>;
  readonly #wal: WriteAheadLog;
  readonly #lock: DirectoryLock;
  readonly #logger: StoreLogger | undefined;
  readonly #compactAfterBytes: number;
  readonly #ttlTimer: NodeJS.Timeout;
  readonly #context: StoreContext;
  #nextCompactionAt: number;
  #compaction: Promise<void> | null = null;
  #closing: Promise<void> | null = null;

  constructor(
    dataDir: string,
    collections: Map<string, CollectionState>,
    wal: WriteAheadLog,
    lock: DirectoryLock,
    options: EmbeddedStoreOptions,
  ) {
    this.#dataDir = dataDir;
    this.#collections = collections;
    this.#wal = wal;
    this.#lock = lock;
    this.#logger = options.logger;
    this.#compactAfterBytes = options.compactAfterBytes ?? 64 * 1024 * 1024;
    this.#nextCompactionAt = this.#compactAfterBytes;
    this.#ttlTimer = setInterval(() => this.#removeExpired(), options.ttlSweepIntervalMs ?? 60_000).unref();
    this.#context = {
      assertUsable: () => this.#assertUsable(),
      commit: (change) => this.#commit(change),
      state: (name) => this.#state(name),
    };
  }

  collection<TDoc extends Document = Document>(name: string): Collection<TDoc> {
    return new EmbeddedCollection<TDoc>(this.#state(name), this.#context);
  }

  async ping(): Promise<void> {
    this.#assertUsable();
  }

  /**
   * Writes a snapshot of everything and drops the log segments it covers. Runs by itself when the
   * log passes compactAfterBytes; a call while one runs joins it.
   */
  async compact(): Promise<void> {
    this.#assertUsable();
    this.#compaction ??= this.#writeSnapshot().finally(() => {
      this.#compaction = null;
    });
    return this.#compaction;
  }

  /** Writes what is queued, releases the lock; later calls on the store reject. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    clearInterval(this.#ttlTimer);
    try {
      // A failed compaction was logged already; the log still holds everything.
      await this.#compaction?.catch(() => undefined);
      await this.#wal.close();
    } finally {
      await this.#lock.release();
    }
    this.#logger?.info({ dataDir: this.#dataDir }, 'docstore closed');
  }

  #assertUsable(): void {
    if (this.#closing) throw new Error('The docstore is closed');
    const failure = this.#wal.failure;
    if (failure) {
      throw new Error(
        `The docstore stopped accepting work (${failure.message}); restart the process to recover`,
        {
          cause: failure,
        },
      );
    }
  }

  #state(name: string): CollectionState {
    if (!name || name.includes('$') || name.includes('\0'))
      throw new Error(`Invalid collection name: "${name}"`);
    let state = this.#collections.get(name);
    if (!state) {
      state = new CollectionState(name);
      this.#collections.set(name, state);
    }
    return state;
  }

  async #commit(change: Change): Promise<void> {
    try {
      await this.#wal.append(encodeJson(change));
    } catch (error) {
      this.#logger?.error({ err: error, dataDir: this.#dataDir }, 'docstore write-ahead log failed');
      throw error;
    }
    if (this.#wal.size >= this.#nextCompactionAt && !this.#compaction && !this.#closing) {
      this.compact().then(
        () => {
          this.#nextCompactionAt = this.#compactAfterBytes;
        },
        (error: unknown) => {
          this.#nextCompactionAt = this.#wal.size + this.#compactAfterBytes;
          this.#logger?.error({ err: error, dataDir: this.#dataDir }, 'docstore compaction failed');
        },
      );
    }
  }

  async #writeSnapshot(): Promise<void> {
    const started = Date.now();
    // Stored documents are replaced, never modified, so these lists stay the state as of this moment,
    // which is what the log holds up to the rotation below (same tick: no write can come between).
    const collections = [...this.#collections.values()].map((state) => ({
      name: state.name,
      indexes: state.indexes.definitions,
      documents: [...state.documents.values()],
    }));
    const walSequence = await this.#wal.rotate();
    await writeSnapshot(this.#dataDir, { walSequence, collections });
    await removeSegmentsBefore(this.#dataDir, walSequence);
    const documents = collections.reduce((total, collection) => total + collection.documents.length, 0);
    this.#logger?.info({ dataDir: this.#dataDir, documents, ms: Date.now() - started }, 'docstore compacted');
  }

  #removeExpired(): void {
    if (this.#closing || this.#wal.failure) return;
    const now = Date.now();
    for (const state of this.#collections.values()) {
      const ids = state.expired(now);
      if (ids.length === 0) continue;
      for (const id of ids) state.delete(id);
      this.#commit({ collection: state.name, delete: ids }).catch(() => {
        // #commit logged it; the store now rejects further work.
      });
    }
  }
}

/**
 * Applies the log segments from `fromSequence` on, in order, and returns the segment to append to.
 * Only the very last line may be damaged (a write cut short by a crash, never acknowledged): it is
 * cut off the file. Damage anywhere else means the files were altered, and opening fails.
 */
async function replayLog(
  dataDir: string,
  fromSequence: number,
  collections: Map<string, LoadedCollection>,
  logger: StoreLogger | undefined,
): Promise<number> {
  // Segments before the snapshot's are left over from a compaction interrupted before its cleanup.
  await removeSegmentsBefore(dataDir, fromSequence);
  const sequences = await listSegments(dataDir);
  const missing = sequences.findIndex((sequence, position) => sequence !== fromSequence + position);
  if (missing !== -1) {
    throw new Error(`The write-ahead log segment ${segmentPath(dataDir, fromSequence + missing)} is missing`);
  }
  for (const [position, sequence] of sequences.entries()) {
    const path = segmentPath(dataDir, sequence);
    let intactBytes = 0;
    let damagedLine: number | null = null;
    let lineNumber = 0;
    for await (const line of readLines(path)) {
      lineNumber++;
      if (damagedLine !== null) {
        throw new Error(`The write-ahead log ${path} is damaged at line ${damagedLine}, before its end`);
      }
      const changes = line.complete ? parseChanges(line.text) : null;
      if (!changes) {
        damagedLine = lineNumber;
        continue;
      }
      for (const change of changes) applyChange(collections, change);
      intactBytes = line.end;
    }
    if (damagedLine === null) continue;
    if (position !== sequences.length - 1) {
      throw new Error(
        `The write-ahead log ${path} is damaged at line ${damagedLine}, and later segments exist`,
      );
    }
    logger?.warn(
      { path, line: damagedLine },
      'docstore log ends with an incomplete write (never acknowledged): dropped',
    );
    const handle = await open(path, 'r+');
    try {
      await handle.truncate(intactBytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  return sequences.at(-1) ?? fromSequence;
}

function parseChanges(text: string): Change[] | null {
  try {
    const changes = decodeJson(text);
    return Array.isArray(changes) ? (changes as Change[]) : null;
  } catch {
    return null;
  }
}

/** A collection as read from disk, before its indexes are built. */
interface LoadedCollection {
  documents: Map<string, Document>;
  indexes: IndexDefinition[];
}

function applyChange(collections: Map<string, LoadedCollection>, change: Change): void {
  let collection = collections.get(change.collection);
  if (!collection) {
    collection = { documents: new Map(), indexes: [] };
    collections.set(change.collection, collection);
  }
  if ('put' in change) for (const document of change.put) collection.documents.set(document._id, document);
  else if ('delete' in change) for (const id of change.delete) collection.documents.delete(id);
  else collection.indexes.push(change.index);
}
