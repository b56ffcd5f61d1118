import Database from 'libsql';
import type { Db } from './host.js';

/**
 * The WAL size past which the writer checkpoints itself after a commit (see Checkpointer), so that
 * its next write rewinds the WAL; SQLite cuts the file back to this size then (journal_size_limit).
 */
export const WAL_LIMIT_BYTES = 16 * 2 ** 20;

export function openConnection(path: string, cacheKiB: number, readonly: boolean): Db {
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
  // loop, before it acknowledges a batch (see GroupCommit). Checkpoints still sync (NORMAL).
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
export function pageSize(db: Db): number {
  const [row] = db.pragma('page_size') as { page_size?: unknown }[];
  const bytes = Number(row?.page_size);
  if (!Number.isInteger(bytes) || bytes <= 0)
    throw new Error(`Unexpected SQLite page size: ${String(row?.page_size)}`);
  return bytes;
}
