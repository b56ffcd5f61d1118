import { expect, it, onTestFinished } from 'vitest';
import { openEmbeddedStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

async function openStore() {
  const dataDir = await tempDir('sql-access');
  const store = await openEmbeddedStore({ dataDir: dataDir.path });
  onTestFinished(async () => {
    await store.close().catch(() => undefined);
    await dataDir.remove();
  });
  await store.sql.execute('CREATE TABLE "t:items" (n INTEGER PRIMARY KEY, label TEXT NOT NULL)');
  return store;
}

const labels = (store: Awaited<ReturnType<typeof openStore>>) =>
  store.sql.read((sql) => sql.all('SELECT label FROM "t:items" ORDER BY n').map(([label]) => label));

it('writes in the group commit and reads committed rows as arrays', async () => {
  const store = await openStore();
  const results = await Promise.all([
    store.sql.execute('INSERT INTO "t:items" VALUES (?, ?)', [1, 'one']),
    store.sql.write((sql) => {
      sql.run('INSERT INTO "t:items" VALUES (?, ?)', [2, 'two']);
      return sql.get('SELECT count(*) FROM "t:items"')?.[0];
    }),
  ]);
  expect(results).toEqual([{ changes: 1 }, 2]);
  expect(labels(store)).toEqual(['one', 'two']);
});

it('undoes the whole of a write that throws, and keeps the writes around it', async () => {
  const store = await openStore();
  const failing = store.sql.write((sql) => {
    sql.run('INSERT INTO "t:items" VALUES (?, ?)', [1, 'kept?']);
    sql.run('INSERT INTO "t:items" VALUES (?, ?)', [1, 'duplicate']);
  });
  const next = store.sql.execute('INSERT INTO "t:items" VALUES (?, ?)', [2, 'after']);
  await expect(failing).rejects.toThrow(/UNIQUE/);
  await next;
  expect(labels(store)).toEqual(['after']);
});

it('belongs to a transaction it names: committed with it, rolled back with it', async () => {
  const store = await openStore();
  const items = store.collection('items');
  await store.transaction(async (tx) => {
    await tx.collection('items').insertOne({ _id: 'a' });
    await store.sql.execute('INSERT INTO "t:items" VALUES (?, ?)', [1, 'with a'], tx);
  });
  await expect(
    store.transaction(async (tx) => {
      await tx.collection('items').insertOne({ _id: 'b' });
      await store.sql.write((sql) => sql.run('INSERT INTO "t:items" VALUES (?, ?)', [2, 'with b']), tx);
      throw new Error('changed my mind');
    }),
  ).rejects.toThrow('changed my mind');
  expect(await items.find({})).toEqual([{ _id: 'a' }]);
  expect(labels(store)).toEqual(['with a']);
});

it('refuses a transaction that is over or not its own', async () => {
  const store = await openStore();
  let finished: Parameters<Parameters<typeof store.transaction>[0]>[0] | undefined;
  await store.transaction(async (tx) => {
    finished = tx;
  });
  await expect(store.sql.execute('INSERT INTO "t:items" VALUES (1, ?)', ['late'], finished)).rejects.toThrow(
    /transaction is over/,
  );
  await expect(
    store.sql.execute('INSERT INTO "t:items" VALUES (1, ?)', ['foreign'], { collection: store.collection }),
  ).rejects.toThrow(/Not a transaction of this store/);
  expect(labels(store)).toEqual([]);
});
