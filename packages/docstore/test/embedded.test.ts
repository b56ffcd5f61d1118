import { spawnSync } from 'node:child_process';
import { appendFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Document,
  type EmbeddedDocStore,
  type EmbeddedStoreOptions,
  openEmbeddedStore,
  openStore,
} from '../src/index.js';
import { tempDir } from './temp-dir.js';

let dataDir: Awaited<ReturnType<typeof tempDir>>;
const open = (options: Partial<EmbeddedStoreOptions> = {}) =>
  openEmbeddedStore({ dataDir: dataDir.path, ...options });
const walFiles = async () => (await readdir(dataDir.path)).filter((name) => name.startsWith('wal-')).sort();

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

  it('compacts the log into a snapshot and loses nothing', async () => {
    let store = await open({ compactAfterBytes: 16 * 1024 });
    const leads = store.collection('leads');
    await leads.createIndex({ status: 1 });
    for (let i = 0; i < 300; i++) {
      await leads.insertOne({
        _id: `l${i}`,
        status: 'new',
        at: new Date(1_700_000_000_000 + i),
        note: 'x'.repeat(100),
      });
      if (i % 3 === 0) await leads.updateOne({ _id: `l${i}` }, { $set: { status: 'contacted' } });
      if (i % 10 === 0) await leads.deleteOne({ _id: `l${i}` });
    }
    await store.close();

    const files = await readdir(dataDir.path);
    expect(files).toContain('snapshot.jsonl');
    const segments = await walFiles();
    expect(segments.length).toBe(1);
    expect(segments[0]).not.toBe('wal-00000001.log');

    store = await open();
    const reopened = store.collection('leads');
    expect(await reopened.countDocuments()).toBe(270);
    expect(await reopened.countDocuments({ status: 'contacted' })).toBe(90);
    expect(await reopened.findOne({ _id: 'l299' })).toEqual({
      _id: 'l299',
      status: 'new',
      at: new Date(1_700_000_000_299),
      note: 'x'.repeat(100),
    });
    await reopened.insertOne({ _id: 'after', status: 'new' });
    await store.compact();
    await reopened.deleteOne({ _id: 'l1' });
    await store.close();

    store = await open();
    expect(await store.collection('leads').countDocuments()).toBe(270);
    expect(await store.collection('leads').findOne({ _id: 'after' })).not.toBeNull();
    await store.close();
  });

  it('drops a last log line cut short by a crash, and appends after it cleanly', async () => {
    let store = await open();
    await store.collection('leads').insertMany([{ _id: 'a' }, { _id: 'b' }]);
    await store.close();
    const [segment] = await walFiles();
    await appendFile(join(dataDir.path, segment), '[{"collection":"leads","put":[{"_id":"torn"');

    store = await open();
    const leads = store.collection('leads');
    expect((await leads.find({})).map((lead) => lead._id)).toEqual(['a', 'b']);
    await leads.insertOne({ _id: 'c' });
    await store.close();

    store = await open();
    expect((await store.collection('leads').find({})).map((lead) => lead._id)).toEqual(['a', 'b', 'c']);
    await store.close();
  });

  it('refuses to open a log damaged before its end', async () => {
    const store = await open();
    await store.collection('leads').insertOne({ _id: 'a' });
    await store.close();
    const [segment] = await walFiles();
    await appendFile(join(dataDir.path, segment), 'garbage\n[{"collection":"leads","put":[{"_id":"b"}]}]\n');

    await expect(open()).rejects.toThrow(/damaged at line 2/);
    // The failed open released the lock: fixing the file is enough.
    await writeFile(join(dataDir.path, segment), '[{"collection":"leads","put":[{"_id":"a"}]}]\n');
    const repaired = await open();
    expect(await repaired.collection('leads').countDocuments()).toBe(1);
    await repaired.close();
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
  it('keeps a field named __proto__ as data through the log and the snapshot', async () => {
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
    await store.compact();
    await store.close();
    expect(await walFiles()).toEqual(['wal-00000002.log']);
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
