import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoreLogger } from '../../logger.js';
import type { Document } from '../../types.js';
import type { IndexDefinition } from '../indexes.js';
import { type Db, PLAN_PROBE_ROWS, type Statement, Table, type TableHost } from '../table.js';
import { normalizeValue } from '../values.js';
import { decodeJson } from './codec.js';
import { readLines } from './files.js';
import { readSnapshot, SNAPSHOT_FILE } from './snapshot.js';
import { listSegments, SEGMENT_NAME, segmentPath } from './wal.js';

const MIGRATED = 'legacy-store-migrated';

/** A collection of the old store as its files hold it. */
interface LegacyCollection {
  documents: Map<string, Document>;
  indexes: IndexDefinition[];
}

type Change =
  | { collection: string; put: Document[] }
  | { collection: string; delete: string[] }
  | { collection: string; index: IndexDefinition };

/**
 * Migrates a data directory of the old in-memory store (`snapshot.jsonl` and `wal-NNNNNNNN.log`
 * segments) into the SQLite file on first open: every collection, its index definitions and its
 * documents in one transaction; then the old files move to `legacy-store-<timestamp>/`. A crash
 * before the commit leaves the old files where they were (the next open does it again); a crash
 * after it only leaves files to move (the catalog's marker says the data is in already).
 */
export async function migrateLegacyStore(
  dataDir: string,
  db: Db,
  logger: StoreLogger | undefined,
): Promise<void> {
  const names = (await readdir(dataDir)).filter((name) => name === SNAPSHOT_FILE || SEGMENT_NAME.test(name));
  if (names.length === 0) return;
  const migrated = db.prepare('SELECT value FROM meta WHERE key = ?').raw().get(MIGRATED);
  if (!migrated) {
    const started = Date.now();
    const collections = await readLegacyStore(dataDir, logger);
    const host = migrationHost(db);
    db.exec('BEGIN IMMEDIATE');
    try {
      let documents = 0;
      for (const [name, { documents: stored, indexes }] of collections) {
        const table = new Table(host, null, name);
        table.create();
        for (const index of indexes) table.addIndex(index);
        for (const document of stored.values()) {
          table.insert(normalizeValue(document, '') as Document);
          documents++;
        }
      }
      db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(
        MIGRATED,
        new Date().toISOString(),
      );
      db.exec('COMMIT');
      logger?.info(
        { dataDir, collections: collections.size, documents, ms: Date.now() - started },
        'docstore migrated the old store files into SQLite',
      );
    } catch (error) {
      db.exec('ROLLBACK');
      throw new Error(`Migrating the old docstore files in ${dataDir} failed: ${String(error)}`, {
        cause: error,
      });
    }
  }
  const legacyDir = join(dataDir, `legacy-store-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  await mkdir(legacyDir, { recursive: true });
  for (const name of names) await rename(join(dataDir, name), join(legacyDir, name));
  logger?.warn(
    { dataDir, legacyDir },
    'docstore moved the old store files aside after migrating them; that directory can be deleted',
  );
}

/** A TableHost for the migration's one transaction (no group commit, no undo: it all rolls back). */
function migrationHost(db: Db): TableHost {
  const statements = new Map<string, Statement>();
  let depth = 0;
  return {
    writer: db,
    planProbeRows: PLAN_PROBE_ROWS,
    statement(target, sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = target.prepare(sql) as Statement;
        if (statement.reader) statement.raw();
        statements.set(sql, statement);
      }
      return statement;
    },
    atomically(work) {
      const name = `m${depth++}`;
      db.exec(`SAVEPOINT ${name}`);
      try {
        const result = work();
        db.exec(`RELEASE ${name}`);
        return result;
      } catch (error) {
        db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
        throw error;
      } finally {
        depth--;
      }
    },
    onRollback() {},
    // The store opens its own tables from the catalog once the migration is committed.
    onCommit() {},
  };
}

/**
 * The old store's state: its snapshot, then the log segments after it replayed in order. A last line
 * cut short by a crash was never acknowledged and is skipped; damage anywhere else stops the open.
 */
export async function readLegacyStore(
  dataDir: string,
  logger: StoreLogger | undefined,
): Promise<Map<string, LegacyCollection>> {
  const collections = new Map<string, LegacyCollection>();
  const snapshot = await readSnapshot(dataDir);
  for (const { name, indexes, documents } of snapshot?.collections ?? []) {
    collections.set(name, {
      documents: new Map(documents.map((document) => [document._id, document])),
      indexes,
    });
  }
  const fromSequence = snapshot?.walSequence ?? 1;
  const sequences = (await listSegments(dataDir)).filter((sequence) => sequence >= fromSequence);
  const missing = sequences.findIndex((sequence, position) => sequence !== fromSequence + position);
  if (missing !== -1) {
    throw new Error(`The write-ahead log segment ${segmentPath(dataDir, fromSequence + missing)} is missing`);
  }
  for (const [position, sequence] of sequences.entries()) {
    const path = segmentPath(dataDir, sequence);
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
    }
    if (damagedLine !== null && position !== sequences.length - 1) {
      throw new Error(
        `The write-ahead log ${path} is damaged at line ${damagedLine}, and later segments exist`,
      );
    }
    if (damagedLine !== null) {
      logger?.warn(
        { path, line: damagedLine },
        'docstore log ends with an incomplete write (never acknowledged): skipped',
      );
    }
  }
  return collections;
}

function parseChanges(text: string): Change[] | null {
  try {
    const changes = decodeJson(text);
    return Array.isArray(changes) ? (changes as Change[]) : null;
  } catch {
    return null;
  }
}

function applyChange(collections: Map<string, LegacyCollection>, change: Change): void {
  let collection = collections.get(change.collection);
  if (!collection) {
    collection = { documents: new Map(), indexes: [] };
    collections.set(change.collection, collection);
  }
  if ('put' in change) for (const document of change.put) collection.documents.set(document._id, document);
  else if ('delete' in change) for (const id of change.delete) collection.documents.delete(id);
  else collection.indexes.push(change.index);
}
