import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Document,
  type EmbeddedDocStore,
  type EmbeddedStoreOptions,
  type Filter,
  openEmbeddedStore,
  openStore,
} from '../src/index.js';
import { tempDir } from './temp-dir.js';

let dataDir: Awaited<ReturnType<typeof tempDir>>;
const open = (options: Partial<EmbeddedStoreOptions> = {}) =>
  openEmbeddedStore({ dataDir: dataDir.path, ...options });

beforeEach(async () => {
  dataDir = await tempDir('embedded');
});

afterEach(async () => {
  await dataDir.remove();
});

describe('embedded store: persistence', () => {
  it('has the documents and indexes back after close and reopen', async () => {
    let store = await open();
    const leads = store.collection('leads');
    await leads.createIndex({ email: 1 }, { unique: true });
    await leads.insertMany([
      {
        _id: 'a',
        email: 'a@example.com',
        createdAt: new Date('2024-05-01T10:00:00Z'),
        tags: ['x'],
        nested: { n: 1 },
      },
      { _id: 'b', email: 'b@example.com', createdAt: new Date('2024-05-02T10:00:00Z'), score: Number.NaN },
      { _id: 'c', email: 'c@example.com' },
    ]);
    await leads.updateOne({ _id: 'a' }, { $set: { 'nested.n': 2 }, $push: { tags: 'y' } });
    await leads.deleteOne({ _id: 'c' });
    await store.close();

    store = await open();
    const reopened = store.collection('leads');
    expect(await reopened.find({}, { sort: { _id: 1 } })).toEqual([
      {
        _id: 'a',
        email: 'a@example.com',
        createdAt: new Date('2024-05-01T10:00:00Z'),
        tags: ['x', 'y'],
        nested: { n: 2 },
      },
      { _id: 'b', email: 'b@example.com', createdAt: new Date('2024-05-02T10:00:00Z'), score: Number.NaN },
    ]);
    await expect(reopened.insertOne({ _id: 'd', email: 'a@example.com' })).rejects.toMatchObject({
      code: 11000,
    });
    expect(await reopened.createIndex({ email: 1 }, { unique: true })).toBe('email_1');
    await store.close();
  });

  it('writes everything queued before close resolves', async () => {
    let store = await open();
    const events = store.collection('events');
    const writes = Array.from({ length: 200 }, (_, i) => events.insertOne({ _id: `e${i}`, i }));
    await store.close();
    await Promise.all(writes);
    await expect(events.insertOne({ _id: 'late' })).rejects.toThrow(/closed/);

    store = await open();
    expect(await store.collection('events').countDocuments()).toBe(200);
    await store.close();
  });
});

describe('embedded store: lock', () => {
  it('lets one store at a time open a data directory', async () => {
    const first = await open();
    await expect(open()).rejects.toThrow(`in use by process ${process.pid}`);
    await first.close();
    const second = await open();
    await second.close();
  });

  it('takes over the lock of a process that is gone', async () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(join(dataDir.path, 'LOCK'), JSON.stringify({ pid: gone }));
    const store = await open();
    await store.collection('leads').insertOne({ _id: 'a' });
    await store.close();
  });
});

describe('embedded store: read connections', () => {
  it('refuses writes on its read connections (libsql opens them read-write whatever the options say)', async () => {
    const store = await open();
    await store.collection('leads').insertOne({ _id: 'a' });
    const stream = store.openReadConnection();
    try {
      for (const db of [store.reader, stream]) {
        expect(() => db.exec('CREATE TABLE written_by_a_reader (a)')).toThrow(/readonly|read-only/i);
        expect(() => db.prepare('DELETE FROM "d:leads"').run()).toThrow(/readonly|read-only/i);
      }
      expect(await store.collection('leads').countDocuments({})).toBe(1);
    } finally {
      stream.close();
      await store.close();
    }
  });
});

describe('embedded store: TTL indexes', () => {
  let store: EmbeddedDocStore;
  afterEach(async () => {
    await store.close();
  });

  it('removes documents whose date is past expireAfterSeconds', async () => {
    store = await open({ ttlSweepIntervalMs: 20 });
    const sessions = store.collection('sessions');
    await sessions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
    await sessions.createIndex({ seenAt: 1 }, { expireAfterSeconds: 3600 });
    await sessions.insertMany([
      { _id: 'expired', expiresAt: new Date(Date.now() - 1000) },
      { _id: 'soon', expiresAt: new Date(Date.now() + 150) },
      { _id: 'later', expiresAt: new Date(Date.now() + 60_000) },
      { _id: 'idle', seenAt: new Date(Date.now() - 2 * 3600_000) },
      { _id: 'active', seenAt: new Date() },
      { _id: 'not-a-date', expiresAt: 'yesterday' },
    ]);
    await expect.poll(() => sessions.countDocuments(), { timeout: 3000 }).toBe(3);
    expect((await sessions.find({}, { sort: { _id: 1 } })).map((session) => session._id)).toEqual([
      'active',
      'later',
      'not-a-date',
    ]);
  });
});

describe('embedded store: values', () => {
  it('keeps a field named __proto__ as data through SQLite', async () => {
    const payload = () =>
      JSON.parse('{"_id":"p","custom":{"__proto__":{"isAdmin":true},"plan":"pro"}}') as Document;
    const expectData = (document: Document | null) => {
      const custom = document?.custom as Record<string, unknown>;
      expect(Object.getPrototypeOf(custom)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(custom, '__proto__')?.value).toEqual({ isAdmin: true });
      expect(custom.isAdmin).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('isAdmin');
    };
    let store = await open();
    await store.collection('documents').insertOne(payload());
    await store.close();
    store = await open();
    expectData(await store.collection('documents').findOne({ _id: 'p' }));
    await store.close();
    store = await open();
    const documents = store.collection('documents');
    expectData(await documents.findOne({ _id: 'p' }));

    // A path through __proto__ is refused (mingo's rule), and nothing changes.
    await expect(
      documents.updateOne({ _id: 'p' }, { $set: { 'custom.__proto__.isAdmin': false } }),
    ).rejects.toThrow("Accessing __proto__ is not allowed in selector: 'custom.__proto__.isAdmin'");
    await expect(documents.createIndex({ 'custom.__proto__': 1 })).rejects.toThrow(
      "An index key cannot go through __proto__: 'custom.__proto__'",
    );
    // mingo's $mergeObjects would hand back an object whose prototype is the field's value.
    await expect(
      documents.aggregate([{ $project: { merged: { $mergeObjects: ['$custom', { more: 1 }] } } }]),
    ).rejects.toThrow('The aggregation turned a "__proto__" field into a prototype');
    expectData(await documents.findOne({ _id: 'p' }));
    await store.close();
  });

  it('refuses values the log cannot keep, and non-string ids', async () => {
    const store = await open();
    const things = store.collection('things');
    await expect(things.insertOne({ _id: 'a', tags: new Set(['x']) })).rejects.toThrow(/Set at "tags"/);
    await expect(things.insertOne({ _id: 'b', when: new Date('nope') })).rejects.toThrow(/Invalid Date/);
    await expect(things.insertOne({ _id: 7 } as unknown as { _id: string })).rejects.toThrow(
      /_id must be a string/,
    );
    await things.insertOne({ _id: 'c', missing: undefined, list: [undefined] });
    expect(await things.findOne({ _id: 'c' })).toEqual({ _id: 'c', missing: null, list: [null] });
    await store.close();
  });
});

describe('openStore', () => {
  it('opens the embedded store without a URL and refuses URLs it does not know', async () => {
    const store = await openStore(undefined, { dataDir: dataDir.path });
    expect(store.kind).toBe('embedded');
    await store.close();
    await expect(openStore('postgres://db/leads', { dataDir: dataDir.path })).rejects.toThrow(/mongodb:\/\//);
  });
});

describe('embedded store: values in SQL', () => {
  it('keeps Dates, NaN and strings that look like tagged values apart, and sorts dates in SQL', async () => {
    const store = await open();
    const things = store.collection('things');
    await things.createIndex({ at: 1 });
    await things.createIndex({ label: 1 });
    const tricky = ['\u0001d00000000000000000', '\u0001s', '\u0001', '{"$date":0}'];
    await things.insertMany([
      { _id: 'a', at: new Date('2024-01-02T00:00:00Z'), label: tricky[0], n: Number.NaN },
      { _id: 'b', at: new Date('1969-12-31T23:59:59Z'), label: tricky[1], n: Number.POSITIVE_INFINITY },
      { _id: 'c', at: new Date('2024-01-01T00:00:00Z'), label: tricky[2], n: -0 },
      { _id: 'd', at: null, label: tricky[3] },
    ]);
    await store.close();
    const reopened = await open();
    const again = reopened.collection('things');
    expect((await again.find({}, { sort: { at: -1 } })).map((thing) => thing._id)).toEqual([
      'a',
      'c',
      'b',
      'd',
    ]);
    expect(
      (await again.find({ at: { $gte: new Date('1970-01-01T00:00:00Z') } }, { sort: { at: 1 } })).map(
        (t) => t._id,
      ),
    ).toEqual(['c', 'a']);
    expect((await again.findOne({ _id: 'a' }))?.n).toBeNaN();
    expect((await again.findOne({ _id: 'b' }))?.n).toBe(Number.POSITIVE_INFINITY);
    for (const [i, label] of tricky.entries()) {
      const found = await again.find({ label });
      expect(found.map((thing) => thing.label)).toEqual([label]);
      expect(found[0]._id).toBe('abcd'[i]);
    }
    expect(await again.countDocuments({ label: { $gte: '\u0001', $lt: '\u0002' } })).toBe(3);
    await reopened.close();
  });

  it('answers literal substring regexes from a substring index, exactly as a scan', async () => {
    const store = await open();
    const plain = store.collection('plain');
    const indexed = store.collection('indexed');
    await indexed.createIndex({ text: 1 }, { substring: true });
    const texts = [
      'Ada Lovelace',
      'ada.b (x)',
      'grace hopper',
      'GRACE+1@x.io',
      'Straße',
      'ÉCOLE école',
      '',
      'abc\ndef',
    ];
    const documents = texts.map((text, i) => ({ _id: `t${i}`, text }));
    documents.push(
      { _id: 'arr', text: ['zzz', 'hopper'] as unknown as string },
      { _id: 'num', text: 42 as unknown as string },
    );
    await plain.insertMany(structuredClone(documents));
    await indexed.insertMany(structuredClone(documents));
    await indexed.updateOne({ _id: 't0' }, { $set: { text: 'Ada King, Countess of Lovelace' } });
    await plain.updateOne({ _id: 't0' }, { $set: { text: 'Ada King, Countess of Lovelace' } });
    await indexed.deleteOne({ _id: 't1' });
    await plain.deleteOne({ _id: 't1' });
    const patterns: unknown[] = [
      { $regex: 'ada' },
      { $regex: 'ADA', $options: 'i' },
      { $regex: 'hopper' },
      { $regex: 'Hopper', $options: 'i' },
      { $regex: '\\+1@' },
      { $regex: 'ße' },
      { $regex: 'école' },
      { $regex: 'ÉCOLE', $options: 'i' },
      { $regex: 'c\ndef' },
      { $regex: 'ab' },
      /lovelace$/i,
      { $regex: 'count' },
      { $regex: 'Countess' },
    ];
    for (const pattern of patterns) {
      for (const filter of [{ text: pattern }, { $or: [{ text: pattern }, { _id: 'num' }] }]) {
        const expected = (await plain.find(filter, { sort: { _id: 1 } })).map((d) => d._id);
        expect(
          (await indexed.find(filter, { sort: { _id: 1 } })).map((d) => d._id),
          JSON.stringify(filter),
        ).toEqual(expected);
        expect(await indexed.countDocuments(filter)).toBe(expected.length);
      }
    }
    await store.close();
  });
});

describe('embedded store: transactions run in place (NestingOptions.inlineNested)', () => {
  it('runs the transactions inside in place, reports one that failed, and undoes all with the outer one', async () => {
    const store = await open();
    const leads = store.collection<{ _id: string; step: string }>('leads');
    const failures: unknown[] = [];
    const opened: string[] = [];
    const exec = store.writer.exec.bind(store.writer);
    store.writer.exec = (sql: string) => {
      opened.push(sql);
      return exec(sql);
    };
    const outer = store.ambientTransaction(async () => {
      await store.transaction(
        async () => {
          await store.transaction(async () => {
            await leads.insertOne({ _id: 'kept', step: 'first' });
          });
          await store
            .transaction(async () => {
              await leads.insertOne({ _id: 'half', step: 'second' });
              throw new Error('half-done');
            })
            .catch(() => undefined);
          // In place: the failed one's write was not undone alone; the caller is told to undo it all.
          expect(await leads.findOne({ _id: 'half' })).not.toBeNull();
          expect(failures).toHaveLength(1);
          throw failures[0];
        },
        { inlineNested: (error) => failures.push(error) },
      );
    });
    await expect(outer).rejects.toThrow('half-done');
    expect(await leads.find({})).toEqual([]);
    // The failed nested one had no savepoint of its own to roll back (s2): only the two around it.
    expect(opened.filter((sql) => sql.startsWith('ROLLBACK TO'))).toEqual([
      'ROLLBACK TO s1; RELEASE s1',
      'ROLLBACK TO s0; RELEASE s0',
    ]);
    await store.close();
  });
});

describe('embedded store: a write with key, text and element tables runs without a savepoint', () => {
  type Person = { _id: string; email: string; handle: string; name: string; tags: string[] };
  const ada: Person = {
    _id: 'a',
    email: 'ada@acme.com',
    handle: 'ada',
    name: 'Ada Lovelace',
    tags: ['math'],
  };
  const bob: Person = {
    _id: 'b',
    email: 'bob@acme.com',
    handle: 'bob',
    name: 'Bob Babbage',
    tags: ['engines'],
  };

  async function people() {
    const store = await open();
    const collection = store.collection<Person>('people');
    await collection.createIndex({ email: 1 }, { unique: true });
    await collection.createIndex({ handle: 1 }, { unique: true });
    await collection.createIndex({ name: 1 }, { substring: true });
    await collection.createIndex({ tags: 1 });
    await collection.insertMany([ada, bob]);
    const savepoints: string[] = [];
    const prepare = store.writer.prepare.bind(store.writer);
    store.writer.prepare = ((sql: string) => {
      if (sql.startsWith('SAVEPOINT')) savepoints.push(sql);
      return prepare(sql);
    }) as typeof store.writer.prepare;
    store.forget(store.writer);
    return { store, collection, savepoints };
  }

  /**
   * What each index finds, once a write has committed what the failed one left in the open batch: a
   * key, text or element it left behind would show here (reads see committed data only).
   */
  async function found(collection: Awaited<ReturnType<typeof people>>['collection']) {
    await collection.updateOne({ _id: 'b' }, { $set: { seen: Date.now() } });
    const ids = async (filter: Filter) =>
      (await collection.find(filter, { sort: { _id: 1 } })).map((d) => d._id);
    return {
      all: await ids({}),
      byEmail: await ids({ email: { $in: ['ada@acme.com', 'bob@acme.com', 'carol@acme.com'] } }),
      byHandle: await ids({ handle: { $in: ['ada', 'bob', 'carol'] } }),
      byName: await ids({ name: { $regex: 'Carol|Lovelace|Babbage' } }),
      byTag: await ids({ tags: { $in: ['math', 'engines', 'poetry'] } }),
    };
  }

  it('undoes an insert that fails on its second unique key, with its first key, text and elements', async () => {
    const { store, collection, savepoints } = await people();
    const before = await found(collection);
    const carol = {
      _id: 'c',
      email: 'carol@acme.com',
      handle: 'bob',
      name: 'Carol Herschel',
      tags: ['poetry'],
    };
    await expect(collection.insertOne(carol)).rejects.toMatchObject({
      code: 11000,
      keyValue: { handle: 'bob' },
    });
    expect(await found(collection)).toEqual(before);
    // Nothing of it was left behind: the same document with a free handle goes in.
    await collection.insertOne({ ...carol, handle: 'carol' });
    expect((await found(collection)).byEmail).toEqual(['a', 'b', 'c']);
    expect(savepoints).toEqual([]);
    await store.close();
  });

  it('undoes an update that fails on its second unique key, restoring the document and its tables', async () => {
    const { store, collection, savepoints } = await people();
    const before = await found(collection);
    await expect(
      collection.updateOne(
        { _id: 'a' },
        { $set: { email: 'carol@acme.com', handle: 'bob', name: 'Carol Herschel', tags: ['poetry'] } },
      ),
    ).rejects.toMatchObject({ code: 11000 });
    expect(await found(collection)).toEqual(before);
    expect(await collection.findOne({ _id: 'a' })).toEqual(ada);
    await collection.updateOne({ _id: 'a' }, { $set: { email: 'carol@acme.com', handle: 'carol' } });
    expect(await collection.findOne({ email: 'carol@acme.com' })).toMatchObject({
      _id: 'a',
      handle: 'carol',
    });
    expect(await collection.findOne({ email: 'ada@acme.com' })).toBeNull();
    expect(savepoints).toEqual([]);
    await store.close();
  });
});
