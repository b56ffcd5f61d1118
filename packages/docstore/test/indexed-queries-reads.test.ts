import { describe, expect, it } from 'vitest';
import { BASE_TIME, rowsDecodedBy } from './indexed-queries.js';
import { storeDir } from './temp-dir.js';

describe('embedded store: queries through indexes', () => {
  it('reads only the candidate rows of an equality on a multikey field', async () => {
    const dataDir = await storeDir('multikey');
    let store = await dataDir.open();
    let leads = store.collection('leads');
    await leads.createIndex({ identityKeys: 1 });
    await leads.createIndex({ tagIds: 1, createdAt: -1 });
    const total = 20_000;
    for (let start = 0; start < total; start += 2000) {
      await leads.insertMany(
        Array.from({ length: 2000 }, (_, offset) => {
          const i = start + offset;
          return {
            _id: `l${i}`,
            identityKeys: [`email:u${i}@x.com`, `phone:+1415${String(i).padStart(7, '0')}`],
            tagIds: i % 100 === 0 ? ['vip', 7] : i % 2 === 0 ? [] : ['t1'],
            createdAt: new Date(BASE_TIME + i),
          };
        }),
      );
    }
    const decoded = <T>(read: () => Promise<T>) => rowsDecodedBy(store, 'leads', read);
    const idsOf = (documents: { _id: string }[]) => documents.map((document) => document._id).sort();

    // The lead service's releaseKeys: another holder of the key?
    expect(
      await decoded(() => leads.findOne({ identityKeys: 'email:u12345@x.com', _id: { $ne: 'l12345' } })),
    ).toEqual({ result: null, rows: 0 });
    expect(await decoded(() => leads.findOne({ identityKeys: 'email:u12345@x.com' }))).toMatchObject({
      result: { _id: 'l12345' },
      rows: 1,
    });
    const byIn = await decoded(() =>
      leads.find({ identityKeys: { $in: ['email:u7@x.com', 'phone:+14150000009', 'none'] } }),
    );
    expect({ ids: idsOf(byIn.result), rows: byIn.rows }).toEqual({ ids: ['l7', 'l9'], rows: 2 });
    const byEq = await decoded(() => leads.find({ identityKeys: { $eq: 'phone:+14150000009' } }));
    expect({ ids: idsOf(byEq.result), rows: byEq.rows }).toEqual({ ids: ['l9'], rows: 1 });
    // 7 and 7.0 are one key; '7' and true are others.
    expect(await decoded(() => leads.countDocuments({ tagIds: 7.0 }))).toEqual({ result: 200, rows: 200 });
    expect(await decoded(() => leads.countDocuments({ tagIds: { $in: ['7', true] } }))).toEqual({
      result: 0,
      rows: 0,
    });
    const sorted = await decoded(() =>
      leads.find({ tagIds: 'vip' }, { sort: { createdAt: -1 }, skip: 10, limit: 5 }),
    );
    expect({ ids: sorted.result.map((lead) => lead._id), rows: sorted.rows }).toEqual({
      ids: ['l18900', 'l18800', 'l18700', 'l18600', 'l18500'],
      // In SQL's createdAt order, reading stops once the page is full.
      rows: 15,
    });
    expect(
      await decoded(() =>
        leads.countDocuments({ $or: [{ identityKeys: 'email:u1@x.com' }, { tagIds: { $in: ['vip'] } }] }),
      ),
    ).toEqual({ result: 201, rows: 201 });
    expect(
      await decoded(() =>
        leads.countDocuments({ $and: [{ tagIds: 'vip' }, { identityKeys: 'email:u100@x.com' }] }),
      ),
    ).toEqual({ result: 1, rows: 1 });
    // Inside a transaction, reads go through the writer: narrowed too, and they see the transaction's writes.
    const inTransaction = await decoded(() =>
      store.transaction(async (tx) => {
        const txLeads = tx.collection('leads');
        await txLeads.updateOne({ _id: 'l5' }, { $push: { identityKeys: 'email:new@x.com' } });
        return txLeads.findOne({ identityKeys: 'email:new@x.com', _id: { $ne: 'l6' } });
      }),
    );
    expect(inTransaction).toMatchObject({ result: { _id: 'l5' } });
    // The update's own read of l5 is by _id: one row, then the narrowed findOne: one row.
    expect(inTransaction.rows).toBe(2);
    // Writes move the keys: removed, replaced, back to a scalar.
    await leads.deleteOne({ _id: 'l7' });
    await leads.updateOne({ _id: 'l9' }, { $set: { identityKeys: 'phone:+14150000009' } });
    await leads.updateOne({ _id: 'l11' }, { $set: { identityKeys: ['email:u7@x.com'] } });
    const moved = await decoded(() =>
      leads.find({ identityKeys: { $in: ['email:u7@x.com', 'phone:+14150000009', 'email:u11@x.com'] } }),
    );
    expect({ ids: idsOf(moved.result), rows: moved.rows }).toEqual({ ids: ['l11', 'l9'], rows: 2 });

    // Null is not narrowed (a missing field matches it), but answered right.
    await leads.insertOne({ _id: 'bare', createdAt: new Date(BASE_TIME) });
    expect(idsOf(await leads.find({ identityKeys: null }))).toEqual(['bare']);
    expect(idsOf(await leads.find({ identityKeys: { $in: [null, 'email:u3@x.com'] } }))).toEqual([
      'bare',
      'l3',
    ]);

    // The catalog remembers the element tables across a restart.
    await store.close();
    store = await dataDir.open();
    leads = store.collection('leads');
    expect(await decoded(() => leads.findOne({ identityKeys: 'email:u12345@x.com' }))).toMatchObject({
      result: { _id: 'l12345' },
      rows: 1,
    });
  }, 120_000);

  it('counts and pages a literal search in SQL, reading only the rows it answers', async () => {
    const dataDir = await storeDir('search');
    const store = await dataDir.open();
    const leads = store.collection('leads');
    await leads.createIndex({ searchText: 1 }, { substring: true });
    await leads.createIndex({ company: 1 });
    await leads.insertMany(
      Array.from({ length: 3000 }, (_, i) => ({
        _id: `l${String(i).padStart(4, '0')}`,
        searchText: `${i % 3 === 0 ? 'grace hopper' : 'alan turing'} u${i}@x.com`,
        company: i % 10 === 0 ? 'Ådå 50%_Labs' : 'Acme',
      })),
    );
    const decoded = <T>(read: () => Promise<T>) => rowsDecodedBy(store, 'leads', read);
    // Through the trigram table, then checked exactly in SQL: the count reads no document.
    expect(await decoded(() => leads.countDocuments({ searchText: { $regex: 'grace hop' } }))).toEqual({
      result: 1000,
      rows: 0,
    });
    const page = await decoded(() =>
      leads.find({ searchText: { $regex: 'grace hop' } }, { sort: { _id: 1 }, skip: 20, limit: 5 }),
    );
    expect({ ids: page.result.map((lead) => lead._id), rows: page.rows }).toEqual({
      ids: ['l0060', 'l0063', 'l0066', 'l0069', 'l0072'],
      rows: 5,
    });
    // Shorter than a trigram, on a field without a trigram table, or ASCII without case: still SQL.
    expect(await decoded(() => leads.countDocuments({ searchText: { $regex: 'u7' } }))).toEqual({
      result: 111,
      rows: 0,
    });
    expect(
      await decoded(() => leads.countDocuments({ company: { $regex: '50%_l', $options: 'i' } })),
    ).toEqual({ result: 300, rows: 0 });
    expect(await decoded(() => leads.countDocuments({ company: { $regex: '0%l', $options: 'i' } }))).toEqual({
      result: 0,
      rows: 0,
    });
    // A case-insensitive text beyond ASCII: JavaScript's folding, so mingo reads the rows.
    const folded = await decoded(() => leads.countDocuments({ company: { $regex: 'ådå', $options: 'i' } }));
    expect(folded.result).toBe(300);
    expect(folded.rows).toBe(3000);
  });

  it('builds an element table when a field first holds an array, also over existing rows', async () => {
    const dataDir = await storeDir('multikey-build');
    const store = await dataDir.open();
    const items = store.collection('items');
    await items.insertMany(
      Array.from({ length: 300 }, (_, i) => ({ _id: `i${i}`, tags: [`t${i % 30}`], n: i })),
    );
    // An index added over arrays starts with its element table.
    await items.createIndex({ tags: 1 });
    const decoded = <T>(read: () => Promise<T>) => rowsDecodedBy(store, 'items', read);
    expect(await decoded(() => items.countDocuments({ tags: 't3' }))).toEqual({ result: 10, rows: 10 });

    // A field of scalars turns multikey with a write: the table is built then, over every row.
    await items.createIndex({ code: 1 });
    for (let r = 0; r < 7; r++) await items.updateMany({ n: { $mod: [7, r] } }, { $set: { code: `c${r}` } });
    // Strings only so far: SQL counts exactly, decoding nothing.
    expect(await decoded(() => items.countDocuments({ code: 'c3' }))).toEqual({ result: 43, rows: 0 });
    // Written without awaiting: the array creates the table in the open batch. A read in the same turn
    // (on the reader, which sees committed data only) must not see the table before its commit.
    const write = items.updateOne({ _id: 'i3' }, { $set: { code: ['c3', 'x'] } });
    expect(await items.countDocuments({ code: 'c3' })).toBe(43);
    await write;
    expect(await decoded(() => items.countDocuments({ code: 'x' }))).toEqual({ result: 1, rows: 1 });
    expect(await decoded(() => items.countDocuments({ code: 'c3' }))).toEqual({ result: 43, rows: 43 });
    await items.updateOne({ _id: 'i3' }, { $set: { code: 'c3' } });
    expect(await decoded(() => items.countDocuments({ code: 'x' }))).toEqual({ result: 0, rows: 0 });
  });
});
