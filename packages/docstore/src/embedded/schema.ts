import type { Db } from './host.js';

/**
 * One step of the embedded store's layout. `version` is its place in the list (1, 2, …); `up` changes
 * a store at `version - 1` into one at `version`, and runs in the transaction that records the new
 * version, so a crash leaves the store at one version or the other.
 */
export interface Migration {
  version: number;
  description: string;
  up(db: Db): void;
}

/**
 * The embedded store's layout, as numbered migrations; SQLite's `user_version` says how many a store
 * has had. Append a migration for every change of the layout; never edit one that shipped.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'catalog of collections (indexes, type flags, element tables, columns)',
    up(db) {
      // IF NOT EXISTS: a store created before versions were kept (version 0) has this layout already.
      db.exec(
        'CREATE TABLE IF NOT EXISTS catalog (name TEXT PRIMARY KEY, indexes TEXT NOT NULL, ' +
          "types TEXT NOT NULL, elements TEXT NOT NULL DEFAULT '[]', columns TEXT NOT NULL DEFAULT '[]')",
      );
    },
  },
];

export class StoreVersionError extends Error {
  override readonly name = 'StoreVersionError';
}

function schemaVersion(db: Db): number {
  const [row] = db.pragma('user_version') as { user_version?: unknown }[];
  const version = Number(row?.user_version);
  if (!Number.isInteger(version) || version < 0)
    throw new Error(`Unexpected SQLite user_version: ${String(row?.user_version)}`);
  return version;
}

/**
 * Brings the store on `db` (the writer) to the last of `migrations`, each in a transaction of its
 * own. Refuses a store of a version newer than the list: it was written by a newer release, whose
 * layout this code would misread. Returns the versions it ran.
 */
export function migrateSchema(
  db: Db,
  dataDir: string,
  migrations: readonly Migration[] = MIGRATIONS,
): number[] {
  migrations.forEach((migration, i) => {
    if (migration.version !== i + 1)
      throw new Error(`Migration ${i + 1} is numbered ${migration.version}: number them 1, 2, … in order`);
  });
  const latest = migrations.length;
  const current = schemaVersion(db);
  if (current > latest) {
    throw new StoreVersionError(
      `The store in ${dataDir} is at schema version ${current}, newer than this release knows (${latest}): ` +
        'it was written by a newer release. Run that release (or newer), or restore a backup taken before the upgrade.',
    );
  }
  const ran: number[] = [];
  for (const migration of migrations.slice(current)) {
    db.exec('BEGIN IMMEDIATE');
    try {
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
    ran.push(migration.version);
  }
  return ran;
}
