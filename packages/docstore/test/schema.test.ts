import { join } from 'node:path';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { STORE_FILE } from '../src/embedded/open.js';
import { MIGRATIONS, type Migration } from '../src/embedded/schema.js';
import { storeDir } from './temp-dir.js';

/** The store file's schema version, read with a connection of its own (the store closed). */
function versionOf(dataDir: string): number {
  const db = new Database(join(dataDir, STORE_FILE));
  try {
    const [row] = db.pragma('user_version') as { user_version: number }[];
    return Number(row!.user_version);
  } finally {
    db.close();
  }
}

function setVersion(dataDir: string, version: number): void {
  const db = new Database(join(dataDir, STORE_FILE));
  db.pragma(`user_version = ${version}`);
  db.close();
}

describe('embedded store: schema version and migrations', () => {
  it('creates a fresh store at the latest version', async () => {
    const dir = await storeDir('schema-fresh');
    const store = await dir.open();
    await store.collection('leads').insertOne({ _id: 'a' });
    await store.close();
    expect(versionOf(dir.path)).toBe(MIGRATIONS.length);
  });

  it('runs a new migration once on a store at the previous version, and never again', async () => {
    const dir = await storeDir('schema-upgrade');
    const first = await dir.open();
    await first.collection('leads').insertOne({ _id: 'a', email: 'a@example.com' });
    await first.close();
    expect(versionOf(dir.path)).toBe(1);

    let runs = 0;
    const next: Migration = {
      version: MIGRATIONS.length + 1,
      description: 'a table of tags',
      up(db) {
        runs++;
        db.exec("CREATE TABLE tags (name TEXT PRIMARY KEY); INSERT INTO tags VALUES ('hot')");
      },
    };
    const migrations = [...MIGRATIONS, next];
    const upgraded = await dir.open({ migrations });
    expect(runs).toBe(1);
    expect(upgraded.sql!.read((sql) => sql.all('SELECT name FROM tags'))).toEqual([['hot']]);
    expect(await upgraded.collection('leads').findOne({ _id: 'a' })).toEqual({
      _id: 'a',
      email: 'a@example.com',
    });
    await upgraded.close();
    expect(versionOf(dir.path)).toBe(next.version);

    const reopened = await dir.open({ migrations });
    expect(runs).toBe(1);
    expect(reopened.sql!.read((sql) => sql.all('SELECT name FROM tags'))).toEqual([['hot']]);
    await reopened.close();
  });

  it('leaves a store at its version when a migration fails, and runs it again on the next open', async () => {
    const dir = await storeDir('schema-failure');
    await (await dir.open()).close();
    let fail = true;
    const migrations: Migration[] = [
      ...MIGRATIONS,
      {
        version: MIGRATIONS.length + 1,
        description: 'fails halfway the first time',
        up(db) {
          db.exec('CREATE TABLE half (x)');
          if (fail) throw new Error('disk on fire');
        },
      },
    ];
    await expect(dir.open({ migrations })).rejects.toThrow('disk on fire');
    expect(versionOf(dir.path)).toBe(MIGRATIONS.length);
    fail = false;
    const store = await dir.open({ migrations });
    expect(store.sql!.read((sql) => sql.all('SELECT count(*) FROM half'))).toEqual([[0]]);
    await store.close();
    expect(versionOf(dir.path)).toBe(MIGRATIONS.length + 1);
  });

  it('refuses to open a store of a newer version than it knows, naming both versions', async () => {
    const dir = await storeDir('schema-too-new');
    const store = await dir.open();
    await store.collection('leads').insertOne({ _id: 'a' });
    await store.close();
    const newer = MIGRATIONS.length + 1;
    setVersion(dir.path, newer);

    await expect(dir.open()).rejects.toThrow(
      `is at schema version ${newer}, newer than this release knows (${MIGRATIONS.length})`,
    );
    // Nothing was changed, and the directory is not left locked.
    expect(versionOf(dir.path)).toBe(newer);
    setVersion(dir.path, MIGRATIONS.length);
    const reopened = await dir.open();
    expect(await reopened.collection('leads').countDocuments()).toBe(1);
  });
});
