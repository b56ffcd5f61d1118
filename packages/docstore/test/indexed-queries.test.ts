import { join } from 'node:path';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { STORE_FILE } from '../src/embedded/open.js';
import type { Collection, Filter, FindOptions, IndexKeys, SortSpec, SqlValue } from '../src/index.js';
import { seededRandom } from './random.js';
import { type EmbeddedStore, storeDir } from './temp-dir.js';

/** What `read` answers, and how many rows of `collection` it decoded (read as documents) meanwhile. */
async function rowsDecodedBy<T>(
  store: EmbeddedStore,
  collection: string,
  read: () => Promise<T>,
): Promise<{ result: T; rows: number }> {
  const table = store.table(collection);
  const before = table.rowsDecoded;
  const result = await read();
  return { result, rows: table.rowsDecoded - before };
}

const STATUSES = ['new', 'contacted', 'qualified', 'lost', 'won'] as const;
const BASE_TIME = Date.UTC(2024, 0, 1);
const NAMES = [
  'Ada Lovelace',
  'ada.b (x)',
  'Grace Hopper',
  'grace+1@x.io',
  'Alan Turing',
  'a.d*a',
  '',
  // LIKE's wildcards and escape as text; letters a case-insensitive regex folds only beyond ASCII.
  '50%_off \\ a_d%a',
  'ÅDA Ådå',
];
/** Values of every type a scalar field can hold, so ranges and equality meet type brackets and null. */
const MIXED = [null, -1, 0, 2.5, 7, 'a', 'b7', '', true, false, new Date(BASE_TIME), new Date(BASE_TIME + 1)];
/**
 * Scalars of a multikey field (as the lead service's identityKeys), where equal keys must meet: 1 and
 * 1.0, a Date and its copy, `true` and 1 apart, '1' and 1 apart.
 */
const KEYS = ['k1', 'k2', 'k3', '1', 1, 2.5, true, false, new Date(BASE_TIME), null] as const;
const SORTS: (SortSpec | undefined)[] = [
  undefined,
  { createdAt: -1 },
  { createdAt: 1 },
  { score: -1 },
  { owner: 1 },
  { owner: -1 },
  { score: -1, createdAt: 1 },
  { tags: 1 },
  { createdAt: -1, _id: 1 },
  { day: 1, _id: 1 },
  { day: -1, _id: -1 },
  { mixed: 1 },
  { 'contact.city': -1 },
];

describe('embedded store: queries through indexes', () => {
  // Many queries against a collection SQL cannot help (the scan): slow on a busy machine, not a measure.
  it('answer exactly as a scan does, through inserts, updates and deletes', async () => {
    const dataDir = await storeDir('indexed');
    // A short probe, so that conjunctions of equalities take both of the plans (see QueryPlanner).
    const store = await dataDir.open({ planProbeRows: 10 });
    const random = seededRandom(20240501);
    const plain = store.collection('plain');
    const indexed = store.collection('indexed');
    const singleFields: IndexKeys[] = [
      { status: 1 },
      { sourceId: 1 },
      { score: -1 },
      { createdAt: -1 },
      { tags: 1 },
      { owner: 1 },
      { day: 1 },
      { mixed: 1 },
      { name: 1 },
      { 'contact.city': 1 },
      { keys: 1 },
    ];
    for (const keys of singleFields) await indexed.createIndex(keys);
    await indexed.createIndex({ status: 1, sourceId: 1, createdAt: -1 });
    await indexed.createIndex({ email: 1 }, { unique: true });
    // The note's literal patterns come from its trigram table (a superset mingo checks).
    await indexed.createIndex({ note: 1 }, { substring: true });
    // Its first field turns multikey mid-run (an element table is then built over the rows).
    await indexed.createIndex({ keys: 1, score: -1 });

    let nextId = 0;
    const makeLead = () => {
      const id = nextId++;
      const owner = random.pick([undefined, null, 'o1', 'o2', 'o3']);
      const minute = random.int(500);
      const contact = random.pick([
        undefined,
        null,
        'n/a',
        { city: random.pick(['Paris', 'Lyon', null]) },
        {},
        { city: random.pick(['Paris', 'Lyon', null]) },
      ]);
      return {
        _id: `d${String(id).padStart(4, '0')}`,
        email: `u${id}@example.com`,
        status: random.pick(STATUSES),
        sourceId: `s${random.int(8)}`,
        score: random.int(40),
        createdAt: new Date(BASE_TIME + minute * 60_000),
        // ISO text, as the lead service stores its dates: ranges over strings.
        day: new Date(BASE_TIME + minute * 3_600_000).toISOString(),
        tags: ['a', 'b', 'c', 'd'].filter(() => random.next() < 0.3),
        name: random.pick(NAMES),
        note: random.pick(NAMES),
        ...(random.next() < 0.8 && { mixed: random.pick(MIXED) }),
        // Scalars only at first: arrays come with the writes below.
        ...(random.next() < 0.9 && { keys: random.pick(KEYS) }),
        ...(owner !== undefined && { owner }),
        ...(contact !== undefined && { contact }),
      };
    };
    const both = async (change: (collection: Collection) => Promise<unknown>) => {
      await change(plain);
      await change(indexed);
    };
    const seed = Array.from({ length: 600 }, makeLead);
    await both((collection) => collection.insertMany(structuredClone(seed)));

    const time = () => new Date(BASE_TIME + random.int(500) * 60_000);
    /** A value for the multikey field: a scalar, or an array of them (nested, objects, empty too). */
    const keysValue = (): unknown =>
      random.pick<() => unknown>([
        () => random.pick(KEYS),
        () => [random.pick(KEYS), random.pick(KEYS)],
        () => [random.pick(KEYS)],
        () => [],
        () => [[random.pick(KEYS)], random.pick(KEYS)],
        () => [{ k: random.pick(KEYS) }, random.pick(KEYS)],
        () => [null, random.pick(KEYS)],
        () => ['k1', 1.0, new Date(BASE_TIME)],
      ])();
    const dayText = () => new Date(BASE_TIME + random.int(500) * 3_600_000).toISOString();
    const pattern = () =>
      random.pick<unknown>([
        { $regex: 'ada' },
        { $regex: 'ADA', $options: 'i' },
        { $regex: '^a' },
        { $regex: 'a\\.' },
        { $regex: 'ce$' },
        { $regex: '\\(x\\)' },
        { $regex: '\\+1' },
        { $regex: 'ad', $options: 'i' },
        { $regex: 'a' },
        { $regex: '%_', $options: 'i' },
        { $regex: '\\\\ a_d' },
        { $regex: 'ådå', $options: 'i' },
        { $regex: 'Ådå' },
        /a.a/,
        /^$/,
        { $regex: 'a', $not: /z/ },
      ]);
    const rangeOf = (make: () => unknown) => {
      const range: Record<string, unknown> = {};
      for (const operator of ['$gt', '$gte', '$lt', '$lte'])
        if (random.next() < 0.4) range[operator] = make();
      return Object.keys(range).length > 0 ? range : { $gte: make() };
    };
    /** One condition on a random field: what the indexes answer, what they narrow, what they leave. */
    const randomCondition = (): Filter => {
      switch (random.int(18)) {
        case 0:
          return { status: random.pick([random.pick(STATUSES), { $in: [random.pick(STATUSES), 'won'] }]) };
        case 1:
          return { sourceId: random.pick([`s${random.int(8)}`, { $ne: `s${random.int(8)}` }]) };
        case 2:
          return { score: rangeOf(() => random.int(40)) };
        case 3:
          return { createdAt: rangeOf(time) };
        case 4:
          return { tags: random.pick(['a', 'b', { $in: ['c', 'd'] }, { $size: 0 }, null]) };
        case 5:
          return {
            owner: random.pick([
              null,
              undefined,
              'o1',
              { $eq: 'o2' },
              { $eq: null },
              { $in: [null, 'o3'] },
              { $exists: false },
            ]),
          };
        case 6:
          return {
            _id: random.pick([
              { $in: seed.slice(0, 200).map((lead) => lead._id) },
              seed[random.int(600)]._id,
              { $gte: 'd0300' },
            ]),
          };
        case 7:
          return { day: rangeOf(dayText) };
        case 8:
          return {
            mixed: random.pick([
              rangeOf(() => random.pick(MIXED)),
              random.pick(MIXED),
              { $in: [random.pick(MIXED), random.pick(MIXED)] },
              { $type: 'string' },
            ]),
          };
        case 9:
          return { name: pattern() };
        case 10:
          return { note: pattern() };
        case 11:
          return { 'contact.city': random.pick(['Paris', null, { $in: ['Lyon', null] }, { $gte: 'M' }]) };
        case 12:
          return { $or: [randomCondition(), randomCondition()] };
        case 13:
          return { $and: [randomCondition(), { $and: [randomCondition()] }] };
        case 14:
          return { score: { $gt: random.int(40), $lt: 'x' } };
        case 15:
          return random.next() < 0.5 ? keysCondition() : tagsCondition();
        case 16:
          return {
            $or: [
              { status: random.pick(STATUSES), sourceId: `s${random.int(8)}` },
              { score: { $gte: random.int(40) }, owner: random.pick([null, 'o1']) },
            ],
          };
        default:
          return { $nor: [randomCondition()] };
      }
    };
    /** Equality and $in on a multikey field (through its element table), and what it must not narrow. */
    const keysCondition = (): Filter => ({
      keys: random.pick<() => unknown>([
        () => random.pick(KEYS),
        () => ({ $eq: random.pick(KEYS) }),
        () => ({ $in: [random.pick(KEYS), random.pick(KEYS)] }),
        () => ({ $in: [] }),
        () => ({ $in: [random.pick(KEYS), [random.pick(KEYS)]] }),
        () => [random.pick(KEYS)],
        () => ({ $ne: random.pick(KEYS) }),
        () => ({ $nin: [random.pick(KEYS), 'k2'] }),
        () => ({ $eq: random.pick(KEYS), $ne: random.pick(KEYS) }),
        () => ({ $elemMatch: { $eq: random.pick(KEYS) } }),
        () => ({ $all: [random.pick(KEYS)] }),
        () => ({ $exists: random.next() < 0.5 }),
        () => ({ k: random.pick(KEYS) }),
        () => new Date(BASE_TIME),
        () => 1.0,
      ])(),
    });
    const tagsCondition = (): Filter =>
      random.pick<Filter>([
        { tags: { $in: ['a', 'e'] } },
        { tags: { $eq: 'b' } },
        { $or: [{ tags: 'e' }, { keys: random.pick(KEYS) }] },
        { $or: [{ tags: 'e' }, { mixed: 1 }, { owner: 'o1' }] },
        { $and: [{ tags: 'a' }, { keys: { $in: ['k1', 1] } }] },
        { owner: { $in: ['o1', 'o2'] } },
        { 'contact.city': { $in: ['Lyon', 'Paris'] } },
        { mixed: random.pick(MIXED) },
      ]);
    const randomFilter = (): Filter => {
      const filter: Filter = {};
      for (let i = random.int(4); i > 0; i--) Object.assign(filter, randomCondition());
      return filter;
    };

    for (let round = 0; round < 500; round++) {
      const filter = randomFilter();
      const sort = random.pick(SORTS);
      const options: FindOptions = sort
        ? {
            sort,
            skip: random.pick([0, random.int(30), random.int(700)]),
            ...(random.next() < 0.8 && { limit: 1 + random.int(25) }),
          }
        : {};
      const label = JSON.stringify({ round, filter, options });
      const expected = (await plain.find(filter, options)).map((lead) => lead._id);
      const actual = (await indexed.find(filter, options)).map((lead) => lead._id);
      if (sort) expect(actual, label).toEqual(expected);
      else expect(actual.sort(), label).toEqual(expected.sort());
      expect(await indexed.countDocuments(filter), label).toBe(await plain.countDocuments(filter));

      if (round % 25 === 24) {
        const [status, newStatus] = [random.pick(STATUSES), random.pick(STATUSES)];
        const source = `s${random.int(8)}`;
        const fresh = Array.from({ length: 20 }, makeLead);
        await both((collection) => collection.updateMany({ status }, { $set: { status: newStatus } }));
        await both((collection) =>
          collection.updateMany({ sourceId: source }, { $inc: { score: 3 }, $push: { tags: 'e' } }),
        );
        await both((collection) => collection.deleteMany({ sourceId: source, score: { $lt: 10 } }));
        await both((collection) => collection.updateMany({ owner: 'o3' }, { $unset: { owner: '' } }));
        // Arrays come and go on indexed fields of scalars: the indexes must notice both ways.
        if (round % 50 === 24) {
          await both((collection) =>
            collection.updateMany({ sourceId: source }, { $set: { owner: ['o1', null], mixed: [1, 'a'] } }),
          );
        } else {
          await both((collection) =>
            collection.updateMany({ owner: { $type: 'array' } }, { $set: { owner: 'o2', mixed: 7 } }),
          );
        }
        // The multikey field: from the third batch of writes on, documents turn from scalars to arrays
        // and back (the first array builds its element table over the rows).
        if (round >= 74) {
          for (let i = 0; i < 30; i++) {
            const _id = seed[random.int(seed.length)]._id;
            const value = keysValue();
            await both((collection) =>
              collection.updateOne({ _id }, { $set: { keys: structuredClone(value) } }),
            );
          }
          await both((collection) =>
            collection.updateMany({ keys: { $type: 'array' }, score: { $lt: 5 } }, { $set: { keys: 'k2' } }),
          );
          await both((collection) => collection.deleteMany({ keys: 'k3', score: { $gt: 35 } }));
          const arrays = {
            _id: `x${round}`,
            email: `x${round}@example.com`,
            keys: keysValue(),
            tags: ['e'],
            score: random.int(40),
          };
          await both((collection) => collection.insertOne(structuredClone(arrays)));
        }
        await both((collection) => collection.insertMany(structuredClone(fresh)));
      }
    }
  }, 180_000);

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

  it('intersects equalities no one index covers through their indexes, or lets the selective one drive', async () => {
    const dataDir = await storeDir('conjunction');
    const store = await dataDir.open({ planProbeRows: 25 });
    const leads = store.collection('leads');
    const ownIndexes: IndexKeys[] = [
      { sourceId: 1, createdAt: -1 },
      { qualification: 1, createdAt: -1 },
      { owner: 1 },
    ];
    for (const keys of ownIndexes) await leads.createIndex(keys);
    await leads.createIndex({ status: 1, qualification: 1 });
    await leads.insertMany(
      Array.from({ length: 3000 }, (_, i) => ({
        _id: `l${String(i).padStart(4, '0')}`,
        sourceId: i < 2900 ? 'csv' : 'form',
        qualification: ['hot', 'warm', 'cold'][i % 3],
        status: ['new', 'lost'][i % 2],
        owner: i % 100 === 0 ? 'o1' : null,
        createdAt: new Date(BASE_TIME + i * 1000),
      })),
    );
    const table = store.table('leads');
    /** SQLite's plan for a count of `filter`, as the store plans it: one line per step. */
    const planOfCount = (filter: Filter) => {
      const condition = table.condition(store.reader, filter);
      return store.sql.read((sql) =>
        sql
          .all(
            `EXPLAIN QUERY PLAN SELECT COUNT(*) FROM ${table.rows} WHERE ${condition.sql}`,
            condition.params as SqlValue[],
          )
          .map((row) => String(row[3])),
      );
    };

    // Neither is selective: the qualification is a set of row ids from its index, and the count
    // reads index entries only.
    expect(await leads.countDocuments({ sourceId: 'csv', qualification: 'warm' })).toBe(967);
    expect(planOfCount({ sourceId: 'csv', qualification: 'warm' })).toEqual([
      expect.stringMatching(/USING COVERING INDEX "?i:leads:sourceId_1_createdAt_-1/),
      expect.stringMatching(/LIST SUBQUERY/),
      expect.stringMatching(/USING COVERING INDEX "?i:leads:qualification_1_createdAt_-1/),
    ]);
    const page = await leads.find(
      { qualification: 'warm', sourceId: 'csv' },
      { sort: { createdAt: -1 }, skip: 10, limit: 3 },
    );
    expect(page.map((lead) => lead._id)).toEqual(['l2869', 'l2866', 'l2863']);

    // The owner matches 30 leads: it drives, and the others are tested on its rows.
    expect(await leads.countDocuments({ sourceId: 'csv', qualification: 'hot', owner: 'o1' })).toBe(10);
    expect(planOfCount({ sourceId: 'csv', qualification: 'hot', owner: 'o1' })).toEqual([
      expect.stringMatching(/USING INDEX "?i:leads:owner_1/),
    ]);
    expect(await leads.countDocuments({ qualification: 'hot', sourceId: 'form' })).toBe(33);
    expect(planOfCount({ qualification: 'hot', sourceId: 'form' })).toEqual([
      expect.stringMatching(/USING INDEX "?i:leads:sourceId_1_createdAt_-1/),
    ]);

    // An _id drives (it matches one row at most; the plan counts nothing for it).
    expect(await leads.countDocuments({ sourceId: 'csv', qualification: 'warm', _id: 'l0001' })).toBe(1);
    expect(planOfCount({ sourceId: 'csv', qualification: 'warm', _id: 'l0001' })).toEqual([
      expect.stringMatching(/USING INDEX sqlite_autoindex_.* \(id=\?\)/),
    ]);

    // One index covers both: left to SQLite, which takes it.
    expect(await leads.countDocuments({ qualification: 'cold', status: 'new' })).toBe(500);
    expect(planOfCount({ qualification: 'cold', status: 'new' })).toEqual([
      expect.stringMatching(/USING COVERING INDEX "?i:leads:status_1_qualification_1/),
    ]);
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

  it('keeps each indexed path in a column of its own', async () => {
    const dataDir = await storeDir('index-columns');
    const store = await dataDir.open();
    const leads = store.collection('leads');
    await leads.createIndex({ status: 1, score: -1 });
    await leads.createIndex({ 'contact.city': 1 });
    await leads.insertMany(
      Array.from({ length: 200 }, (_, i) => ({
        _id: `l${i}`,
        status: STATUSES[i % STATUSES.length],
        score: i % 50,
        contact: { city: `c${i % 10}` },
        notes: 0,
      })),
    );
    // Unindexed changes and indexed ones, on the same documents.
    await leads.updateMany({ score: { $lt: 25 } }, { $inc: { notes: 1 } });
    await leads.updateMany({ status: 'new' }, { $set: { status: 'won', 'contact.city': 'moved' } });
    const expectAnswers = async () => {
      expect(await leads.countDocuments({ status: 'new' })).toBe(0);
      expect(await leads.countDocuments({ status: 'won' })).toBe(80);
      expect(await leads.countDocuments({ 'contact.city': 'moved' })).toBe(40);
      expect(await leads.countDocuments({ notes: 1 })).toBe(100);
      const top = await leads.find({ status: 'won' }, { sort: { score: -1 }, limit: 6 });
      expect(top.map((lead) => lead.score)).toEqual([49, 49, 49, 49, 45, 45]);
    };
    await expectAnswers();

    const file = join(dataDir.path, STORE_FILE);
    const planOf = (db: Database.Database, sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).raw().all() as unknown[][]).map((row) => row[3]).join(' ');
    await store.close();
    const db = new Database(file);
    // The indexes are over the columns, and SQL uses them.
    expect(
      planOf(db, `SELECT doc FROM "d:leads" WHERE "p:status" = 'won' ORDER BY "p:score" DESC`),
    ).toContain('USING INDEX "i:leads:status_1_score_-1"'.replaceAll('"', ''));
    const columnValues = db
      .prepare('SELECT "p:status", "p:score", "p:contact.city" FROM "d:leads" WHERE id = ?')
      .raw()
      .get('l0');
    expect(columnValues).toEqual(['won', 0, 'moved']);
    db.close();
  });
});
