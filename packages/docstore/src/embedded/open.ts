import { join, resolve as resolvePath } from 'node:path';
import type { StoreLogger } from '../logger.js';
import { readCatalog } from './catalog.js';
import { openConnection } from './connection.js';
import type { Db } from './host.js';
import { lockDirectory } from './lock.js';
import { secureDataDirectory } from './permissions.js';
import { MIGRATIONS, type Migration, migrateSchema } from './schema.js';
import { EmbeddedDocStore } from './store.js';

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
   * selective (see QueryPlanner). Default PLAN_PROBE_ROWS; tests lower it to reach every plan with
   * few rows.
   */
  planProbeRows?: number;
  /** The layout's migrations (see schema.ts); tests give a longer list. Default MIGRATIONS. */
  migrations?: readonly Migration[];
}

export const STORE_FILE = 'store.sqlite';

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
    const catalog = readCatalog(writer);
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
